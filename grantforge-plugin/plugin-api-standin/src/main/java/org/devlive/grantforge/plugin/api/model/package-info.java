/**
 * Stand-in of GrantForge's plugin model (API 1.1.0): the records a service type definition is made of, with the
 * same component order and the same checks in their constructors, builders and factories.
 */
@NullMarked
package org.devlive.grantforge.plugin.api.model;

import org.jspecify.annotations.NullMarked;
