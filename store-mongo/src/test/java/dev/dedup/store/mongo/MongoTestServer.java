package dev.dedup.store.mongo;

import com.mongodb.ConnectionString;
import com.mongodb.ServerAddress;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.net.InetSocketAddress;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The MongoDB server a test class runs against. No real {@code mongod} can be installed on the machines these tests
 * were written on, so by default it is mongo-java-server 1.47.0 (a MongoDB wire-protocol server with an in-memory
 * backend), started in-process on 127.0.0.1; test classes that use it say so in their names ({@code ...OnMongoJavaServer...}).
 * Where {@code DEDUP_TEST_MONGO_URL} is set, that server is used instead.
 */
final class MongoTestServer implements AutoCloseable {
    static final String URL_VARIABLE = "DEDUP_TEST_MONGO_URL";

    /** Ports below the ephemeral range (32768+), so no outgoing connection holds one when the server restarts. */
    private static final int FIRST_PORT = 20_000;
    private static final int PORTS = 12_000;

    private final String externalUrl;
    private MongoServer server;
    private int port;

    private MongoTestServer(String externalUrl) {
        this.externalUrl = externalUrl;
    }

    /** {@code DEDUP_TEST_MONGO_URL} when set, else a fresh in-process mongo-java-server. */
    static MongoTestServer start() {
        String url = System.getenv(URL_VARIABLE);
        if (url != null && !url.isBlank()) {
            return new MongoTestServer(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
        }
        return startInProcess();
    }

    /** Always an in-process mongo-java-server: for tests that stop and restart it. */
    static MongoTestServer startInProcess() {
        MongoTestServer test = new MongoTestServer(null);
        RuntimeException last = null;
        for (int attempt = 0; attempt < 20; attempt++) {
            int candidate = FIRST_PORT + ThreadLocalRandom.current().nextInt(PORTS);
            try {
                test.bind(candidate);
                return test;
            } catch (RuntimeException e) { // port taken: try another
                last = e;
            }
        }
        throw new IllegalStateException("no free port for the in-process MongoDB test server", last);
    }

    private void bind(int candidate) {
        MongoServer started = new MongoServer(new MemoryBackend());
        try {
            started.bind("127.0.0.1", candidate);
        } catch (RuntimeException e) {
            started.shutdownNow();
            throw e;
        }
        server = started;
        port = candidate;
    }

    /** {@code mongodb://host:port}, without a trailing slash or path. */
    String url() {
        return externalUrl != null ? externalUrl : "mongodb://127.0.0.1:" + port;
    }

    /** The server's host and port, for a fault proxy to forward to. */
    InetSocketAddress address() {
        ServerAddress first = new ServerAddress(new ConnectionString(url()).getHosts().get(0));
        return new InetSocketAddress(first.getHost(), first.getPort());
    }

    boolean inProcess() {
        return externalUrl == null;
    }

    /** What the tests run against, for their output. */
    String describe() {
        return inProcess() ? "mongo-java-server 1.47.0 in-process on 127.0.0.1:" + port : URL_VARIABLE;
    }

    /** Stops the in-process server at once, closing every client connection (an outage). */
    void stop() {
        requireInProcess();
        server.shutdownNow();
        server = null;
    }

    /** Starts a new in-process server, with an empty memory backend, on the same port. */
    void restart() {
        requireInProcess();
        bind(port);
    }

    @Override
    public void close() {
        if (server != null) {
            server.shutdownNow();
            server = null;
        }
    }

    private void requireInProcess() {
        if (!inProcess()) {
            throw new IllegalStateException("only the in-process test server can be stopped and restarted");
        }
    }
}
