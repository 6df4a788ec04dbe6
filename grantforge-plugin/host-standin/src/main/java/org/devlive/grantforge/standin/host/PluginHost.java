package org.devlive.grantforge.standin.host;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;

import org.devlive.grantforge.plugin.api.PluginDescriptor;
import org.devlive.grantforge.plugin.api.ServiceTypeProvider;
import org.devlive.grantforge.plugin.api.model.ServiceTypeDefinition;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * A GrantForge plugin host as the service-plugin specification describes GrantForge 2026.1's (§2.1-2.5), for one
 * jar package: the descriptor at the jar's root (at most 64 KiB, SnakeYAML's safe constructor, a mapping, the
 * descriptor's rules, a compatible API version); a class loader of the plugin's own whose parent is the JDK's
 * platform loader and which borrows only the API's and JSpecify's packages from the host; each provider made by
 * {@code Class.forName(name, true, loader)} and its public no-arg constructor; and every call into the plugin
 * (constructor and {@code definition()} included) on a daemon thread whose context class loader is the plugin's,
 * waited for at most {@link #CALL_LIMIT}.
 */
public final class PluginHost implements AutoCloseable {

    public static final Duration CALL_LIMIT = Duration.ofSeconds(10);
    private static final int MAX_DESCRIPTOR_BYTES = 64 * 1024;
    private static final String[] SHARED_PREFIXES = {"org.devlive.grantforge.plugin.api.", "org.jspecify.annotations."};
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final PluginDescriptor descriptor;
    private final PluginClassLoader loader;
    private final ExecutorService calls = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "plugin-call-" + THREADS.incrementAndGet());
        thread.setDaemon(true);
        return thread;
    });
    private final ServiceTypeProvider provider;
    private final ServiceTypeDefinition definition;

    private PluginHost(Path jar) throws Exception {
        this.descriptor = readDescriptor(jar);
        if (!descriptor.isCompatible()) {
            throw new IllegalStateException("plugin " + descriptor.id() + " is INCOMPATIBLE: built for plugin API "
                    + descriptor.apiVersion());
        }
        this.loader = new PluginClassLoader(descriptor.id(), jar.toUri().toURL(), PluginHost.class.getClassLoader());
        if (descriptor.providers().size() != 1) {
            throw new IllegalStateException("this host loads one provider per plugin, not " + descriptor.providers());
        }
        String name = descriptor.providers().get(0);
        this.provider = call(unused -> instantiate(name));
        this.definition = call(ServiceTypeProvider::definition);
    }

    /** Loads the plugin jar as the host does; any failure is the plugin's FAILED status. */
    public static PluginHost load(Path jar) throws Exception {
        return new PluginHost(jar);
    }

    private ServiceTypeProvider instantiate(String name) {
        try {
            Class<?> type = Class.forName(name, true, loader);
            if (!ServiceTypeProvider.class.isAssignableFrom(type)) {
                throw new IllegalStateException(name + " does not implement " + ServiceTypeProvider.class.getName());
            }
            return (ServiceTypeProvider) type.getConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot instantiate " + name + ": " + e, e);
        }
    }

    public static PluginDescriptor readDescriptor(Path jar) throws IOException {
        try (JarFile file = new JarFile(jar.toFile())) {
            ZipEntry entry = file.getEntry(PluginDescriptor.FILE_NAME);
            if (entry == null) {
                throw new IllegalStateException(jar + " has no " + PluginDescriptor.FILE_NAME + " at its root");
            }
            try (InputStream in = file.getInputStream(entry)) {
                byte[] bytes = in.readNBytes(MAX_DESCRIPTOR_BYTES + 1);
                if (bytes.length > MAX_DESCRIPTOR_BYTES) {
                    throw new IllegalStateException(PluginDescriptor.FILE_NAME + " is larger than 64 KB");
                }
                Object document = new Yaml(new SafeConstructor(new LoaderOptions())).load(new String(bytes, StandardCharsets.UTF_8));
                if (!(document instanceof Map<?, ?> map)) {
                    throw new IllegalStateException(PluginDescriptor.FILE_NAME + " must be a mapping");
                }
                @SuppressWarnings("unchecked")
                Map<String, ?> mapping = (Map<String, ?>) map;
                return PluginDescriptor.fromMap(mapping);
            }
        }
    }

    public PluginDescriptor descriptor() {
        return descriptor;
    }

    public ServiceTypeDefinition definition() {
        return definition;
    }

    public ClassLoader loader() {
        return loader;
    }

    /** A call into the plugin as the host makes it; the limit passing is a failure of the test. */
    public <T> T call(Function<ServiceTypeProvider, T> call) throws Exception {
        Future<T> answer = calls.submit(() -> {
            Thread thread = Thread.currentThread();
            ClassLoader previous = thread.getContextClassLoader();
            thread.setContextClassLoader(loader);
            try {
                return call.apply(provider);
            } finally {
                thread.setContextClassLoader(previous);
            }
        });
        try {
            return answer.get(CALL_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            answer.cancel(true);
            throw new AssertionError("kafka did not answer within " + CALL_LIMIT.toSeconds() + "s", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception thrown) {
                throw thrown;
            }
            throw e;
        }
    }

    @Override
    public void close() throws IOException {
        calls.shutdownNow();
        loader.close();
    }

    /**
     * Borrows the API's and JSpecify's classes from the host; everything else parent-first from the platform loader
     * (the JDK), then the plugin's own jar. The host's kafka-clients, SLF4J and the rest stay invisible.
     */
    static final class PluginClassLoader extends URLClassLoader {
        private final ClassLoader host;

        PluginClassLoader(String id, URL jar, ClassLoader host) {
            super("plugin-" + id, new URL[] {jar}, ClassLoader.getPlatformClassLoader());
            this.host = host;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            for (String prefix : SHARED_PREFIXES) {
                if (name.startsWith(prefix)) {
                    return host.loadClass(name);
                }
            }
            return super.loadClass(name, resolve);
        }
    }

    public static void closeQuietly(PluginHost host) {
        if (host != null) {
            try {
                host.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
