package dev.dedup.store.mongo;

import com.mongodb.MongoClientSettings;
import com.mongodb.ServerAddress;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Clients for fault tests, every wait short. */
final class MongoFaultClients {
    private MongoFaultClients() {}

    /** A client on {@code host:port} (a fault proxy, or the server) whose every wait is bounded by {@code timeout}. */
    static MongoClient client(String host, int port, Duration timeout) {
        return MongoClients.create(settings(host, port, timeout));
    }

    /** The reactive-streams driver's client, with the same settings as {@link #client}. */
    static com.mongodb.reactivestreams.client.MongoClient reactiveClient(String host, int port, Duration timeout) {
        return com.mongodb.reactivestreams.client.MongoClients.create(settings(host, port, timeout));
    }

    private static MongoClientSettings settings(String host, int port, Duration timeout) {
        long millis = timeout.toMillis();
        return MongoClientSettings.builder()
                .applyToClusterSettings(cluster -> cluster.hosts(List.of(new ServerAddress(host, port)))
                        .serverSelectionTimeout(millis, TimeUnit.MILLISECONDS))
                .applyToSocketSettings(socket -> socket.connectTimeout(millis, TimeUnit.MILLISECONDS)
                        .readTimeout(millis, TimeUnit.MILLISECONDS))
                .build();
    }
}
