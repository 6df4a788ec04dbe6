/**
 * Stand-in of GrantForge's plugin SPI (API 1.1.0): the provider interface and the requests and results that
 * cross it. Same package, names, kinds and signatures as the server's, so a plugin compiled against it links
 * against the server's classes. Never packaged into a plugin.
 */
@NullMarked
package org.devlive.grantforge.plugin.api;

import org.jspecify.annotations.NullMarked;
