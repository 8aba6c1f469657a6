package streamsql.registry;

import javax.enterprise.context.ApplicationScoped;
import javax.enterprise.inject.Produces;

import io.apicurio.common.apps.config.DynamicConfigPropertyList;

/**
 * The list of the registry's dynamic configuration properties, which
 * Apicurio's config-index build extension would generate: that extension's
 * deployment artifact is not on Maven Central, so the list is empty here
 * (properties keep their static values; the tests change none).
 */
@ApplicationScoped
public class ConfigProperties {
    @Produces
    @ApplicationScoped
    DynamicConfigPropertyList properties() {
        return new DynamicConfigPropertyList(new java.util.ArrayList<>());
    }
}
