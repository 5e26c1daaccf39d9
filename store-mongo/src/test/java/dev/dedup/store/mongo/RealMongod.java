package dev.dedup.store.mongo;

import dev.dedup.tck.TestServers;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * A real mongod for the tests tagged docker: the URL in {@code DEDUP_TEST_MONGOD_URL} ({@code mongodb://host:port},
 * no path), else a {@code mongo:7} container started once per test JVM (Testcontainers' Ryuk removes it).
 */
final class RealMongod {
    static final String URL_VARIABLE = "DEDUP_TEST_MONGOD_URL";

    private static String url;

    private RealMongod() {}

    static synchronized String url() {
        if (url == null) {
            String found = TestServers.require("a real MongoDB server (mongod 7)", URL_VARIABLE, RealMongod::start);
            url = found.endsWith("/") ? found.substring(0, found.length() - 1) : found;
        }
        return url;
    }

    private static String start() {
        GenericContainer<?> container = new GenericContainer<>("mongo:7")
                .withExposedPorts(27017)
                .waitingFor(Wait.forLogMessage(".*Waiting for connections.*", 1));
        container.start();
        return "mongodb://" + container.getHost() + ":" + container.getMappedPort(27017);
    }
}
