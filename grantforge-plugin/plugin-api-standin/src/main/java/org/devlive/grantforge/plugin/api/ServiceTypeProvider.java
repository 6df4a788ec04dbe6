package org.devlive.grantforge.plugin.api;

import java.util.List;

import org.devlive.grantforge.plugin.api.model.ConfigProblem;
import org.devlive.grantforge.plugin.api.model.ServiceTypeDefinition;

/**
 * A service type a plugin offers. Implementations need a public no-arg constructor and must be thread-safe:
 * the host shares one instance between concurrent calls, each bounded by its call limit.
 */
public interface ServiceTypeProvider {

    /** The definition; called once at load, its result must not change. */
    ServiceTypeDefinition definition();

    /** Problems beyond the field checks, which the host runs first. */
    default List<ConfigProblem> validateConfig(ServiceConfig config) {
        return List.of();
    }

    default ConnectionResult testConnection(ServiceConfig config) {
        return ConnectionResult.unsupported();
    }

    /**
     * Values for a level with {@code lookupSupported}. Failures should be {@link LookupException}s with a reason;
     * any other exception is reported as FAILED.
     */
    default List<String> lookup(LookupRequest request) {
        return List.of();
    }

    default BrowsePage browse(BrowseRequest request) {
        throw new LookupException(LookupException.Reason.FAILED, "this plugin cannot browse " + request.resource());
    }
}
