package dev.dedup.rabbitmq;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.dedup.tck.TestServers;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.security.GeneralSecurityException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * The real RabbitMQ the tests run against. Each test JVM gets a vhost of its own where {@code rabbitmqctl} can make
 * one (it is deleted when the JVM exits); elsewhere the URL's vhost, where every name is unique per run and each test
 * deletes what it declared.
 */
final class RabbitTestBroker {
    static final String SERVER = "RabbitMQ";
    static final String VARIABLE = "DEDUP_TEST_RABBITMQ_URL";

    private static String uri;
    private static String vhost;

    private RabbitTestBroker() {}

    /** The broker's URI (credentials included) and this JVM's vhost, set up on first use. */
    static synchronized String uri() {
        if (uri == null) {
            uri = TestServers.require(SERVER, VARIABLE, RabbitTestBroker::startContainer);
            // Only a broker named by the harness is the one rabbitmqctl on this machine manages (not a container).
            String given = System.getenv(VARIABLE);
            vhost = given != null && !given.isBlank() ? ownVhost(uri) : uriVhost(uri);
        }
        return uri;
    }

    static synchronized String vhost() {
        uri();
        return vhost;
    }

    static ConnectionFactory factory() {
        return factory(uri(), vhost());
    }

    /**
     * A factory for another process of a test (a chaos consumer), on the vhost the test's JVM made: the broker is the
     * one {@value #VARIABLE} names, inherited from the test.
     */
    static ConnectionFactory factoryOn(String vhost) {
        return factory(TestServers.require(SERVER, VARIABLE, null), vhost);
    }

    private static ConnectionFactory factory(String uri, String vhost) {
        ConnectionFactory factory = new ConnectionFactory();
        try {
            factory.setUri(uri);
        } catch (URISyntaxException | GeneralSecurityException e) {
            throw new IllegalStateException(VARIABLE + " is not an amqp:// URI", e);
        }
        factory.setVirtualHost(vhost);
        // Tests close connections on purpose to simulate crashes: no client-side recovery behind their back.
        factory.setAutomaticRecoveryEnabled(false);
        factory.setConnectionTimeout(10_000);
        return factory;
    }

    static Connection connect(String name) throws IOException, TimeoutException {
        return factory().newConnection(name);
    }

    /** A name no other run uses: {@code prefix} + 12 random hex digits. */
    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    /**
     * A vhost for this JVM when the broker is on this machine and rabbitmqctl manages it, deleted at exit; otherwise
     * the URI's own vhost.
     */
    private static String ownVhost(String brokerUri) {
        String fallback = uriVhost(brokerUri);
        String host = URI.create(brokerUri).getHost();
        if (!"127.0.0.1".equals(host) && !"localhost".equals(host)) {
            return fallback;
        }
        String name = unique("dedup-test");
        String user = URI.create(brokerUri).getUserInfo() == null ? "guest"
                : URI.create(brokerUri).getUserInfo().split(":", 2)[0];
        if (!rabbitmqctl("add_vhost", name)) {
            return fallback;
        }
        if (!rabbitmqctl("set_permissions", "-p", name, user, ".*", ".*", ".*")) {
            rabbitmqctl("delete_vhost", name);
            return fallback;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> rabbitmqctl("delete_vhost", name)));
        return name;
    }

    private static String uriVhost(String brokerUri) {
        String path = URI.create(brokerUri).getPath();
        return path == null || path.length() <= 1 ? "/" : path.substring(1);
    }

    private static boolean rabbitmqctl(String... arguments) {
        List<String> command = new java.util.ArrayList<>(List.of("rabbitmqctl", "-q"));
        command.addAll(List.of(arguments));
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return false;
            }
            return process.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Where Docker runs and no broker is given: the official image. */
    private static String startContainer() {
        GenericContainer<?> container = new GenericContainer<>("rabbitmq:3.13")
                .withExposedPorts(5672)
                .waitingFor(Wait.forLogMessage(".*Server startup complete.*", 1));
        container.start();
        return "amqp://guest:guest@" + container.getHost() + ":" + container.getMappedPort(5672);
    }
}
