package dev.dedup.store.dynamodb;

import dev.dedup.tck.TestServers;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import org.testcontainers.containers.GenericContainer;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The DynamoDB endpoint the tests run against: dynalite, the open-source emulator (the vendor's DynamoDB Local may
 * not be used, and the real service is not reachable here). Where Docker runs, dynalite runs in a node container.
 */
final class DynamoDbTestSupport {
    static final String TABLE = "dedup_claims";
    private static final StaticCredentialsProvider DUMMY =
            StaticCredentialsProvider.create(AwsBasicCredentials.create("dummy", "dummy"));

    private static String endpoint;

    private DynamoDbTestSupport() {}

    static synchronized String endpoint() {
        if (endpoint == null) {
            endpoint = TestServers.require("DynamoDB emulator (dynalite)", "DEDUP_TEST_DYNAMODB_URL",
                    DynamoDbTestSupport::startContainer);
        }
        return endpoint;
    }

    static DynamoDbClient client(Duration timeout) {
        return DynamoDbClient.builder().endpointOverride(URI.create(endpoint())).region(Region.US_EAST_1)
                .credentialsProvider(DUMMY).httpClient(UrlConnectionHttpClient.create())
                .overrideConfiguration(ClientOverrideConfiguration.builder().apiCallTimeout(timeout).build())
                .build();
    }

    static DynamoDbAsyncClient asyncClient() {
        return asyncClient(ClientOverrideConfiguration.builder().build());
    }

    /** The async client on the emulator with {@code overrides}, such as an interceptor that watches its requests. */
    static DynamoDbAsyncClient asyncClient(ClientOverrideConfiguration overrides) {
        return DynamoDbAsyncClient.builder().endpointOverride(URI.create(endpoint())).region(Region.US_EAST_1)
                .credentialsProvider(DUMMY).httpClient(NettyNioAsyncHttpClient.create())
                .overrideConfiguration(overrides).build();
    }

    /**
     * A sync client on {@code endpoint} (the emulator, or a fault proxy in front of it) with short timeouts: each
     * attempt at most {@code attemptTimeout}, the whole call with its retries at most {@code callTimeout};
     * {@code maxAttempts} 1 means no retries.
     */
    static DynamoDbClient client(String endpoint, Duration attemptTimeout, Duration callTimeout, int maxAttempts) {
        DynamoDbClient client = DynamoDbClient.builder().endpointOverride(URI.create(endpoint))
                .region(Region.US_EAST_1).credentialsProvider(DUMMY).httpClient(UrlConnectionHttpClient.create())
                .overrideConfiguration(faultTolerance(attemptTimeout, callTimeout, maxAttempts)).build();
        warmUp(() -> client.listTables(request -> request.limit(1)));
        return client;
    }

    /** A sync client on {@code endpoint} as an application might build it: the SDK's defaults, no call timeout. */
    static DynamoDbClient clientWithoutTimeouts(String endpoint) {
        DynamoDbClient client = DynamoDbClient.builder().endpointOverride(URI.create(endpoint))
                .region(Region.US_EAST_1).credentialsProvider(DUMMY).httpClient(UrlConnectionHttpClient.create())
                .build();
        warmUp(() -> client.listTables(request -> request.limit(1)));
        return client;
    }

    /** The async client like {@link #client(String, Duration, Duration, int)}. */
    static DynamoDbAsyncClient asyncClient(String endpoint, Duration attemptTimeout, Duration callTimeout,
            int maxAttempts) {
        DynamoDbAsyncClient client = DynamoDbAsyncClient.builder().endpointOverride(URI.create(endpoint))
                .region(Region.US_EAST_1).credentialsProvider(DUMMY).httpClient(NettyNioAsyncHttpClient.create())
                .overrideConfiguration(faultTolerance(attemptTimeout, callTimeout, maxAttempts)).build();
        warmUp(() -> client.listTables(request -> request.limit(1)).join());
        return client;
    }

    /**
     * A short-timeout client's first call loads the SDK's classes and opens its connection, which can outlast a 400 ms
     * attempt on a loaded 2-core machine: tried until it passes (at most 20 times), before any test sets a fault.
     */
    private static void warmUp(Runnable call) {
        for (int attempt = 1; ; attempt++) {
            try {
                call.run();
                return;
            } catch (SdkException | CompletionException e) {
                if (attempt == 20) {
                    throw new IllegalStateException("the client's first call failed 20 times", e);
                }
            }
        }
    }

    private static ClientOverrideConfiguration faultTolerance(Duration attemptTimeout, Duration callTimeout,
            int maxAttempts) {
        return ClientOverrideConfiguration.builder().apiCallAttemptTimeout(attemptTimeout).apiCallTimeout(callTimeout)
                .retryStrategy(maxAttempts == 1 ? AwsRetryStrategy.doNotRetry()
                        : AwsRetryStrategy.standardRetryStrategy().toBuilder().maxAttempts(maxAttempts).build())
                .build();
    }

    /** The emulator's address, for a fault proxy to forward to. */
    static InetSocketAddress address() {
        URI uri = URI.create(endpoint());
        return new InetSocketAddress(uri.getHost(), uri.getPort());
    }

    /** A URI for DedupStores.open with the emulator's endpoint and dummy credentials. */
    static String uri(String table, String namespace) {
        return "dynamodb://" + table + "?endpoint=" + endpoint() + "&accessKeyId=dummy&secretAccessKey=dummy"
                + "&namespace=" + namespace;
    }

    private static String startContainer() {
        GenericContainer<?> container = new GenericContainer<>("node:20-slim")
                .withCommand("npx", "--yes", "dynalite@4.0.0", "--port", "4567", "--createTableMs", "0")
                .withExposedPorts(4567);
        container.start();
        return "http://" + container.getHost() + ":" + container.getMappedPort(4567);
    }
}
