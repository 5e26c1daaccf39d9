package dev.dedup.store.dynamodb;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.StoreUri;
import dev.dedup.spi.UriParameters;
import java.net.URI;
import java.time.Duration;
import java.util.Set;
import java.util.regex.Pattern;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Opens {@code dynamodb://dedup_claims?region=eu-west-1&namespace=orders}. Parameters: {@code region} (required
 * unless {@code endpoint} is given, then default us-east-1), {@code endpoint} (an http(s) override such as a local
 * emulator), {@code namespace}, {@code timeout} (default 2s, in [1ms, 10m], for each whole call including retries),
 * {@code batchConcurrency} (default 16, in [1, 256]), {@code createTable} (default false), and {@code accessKeyId}
 * with {@code secretAccessKey} (else the SDK's default credentials chain). The table name is the URI's host part;
 * credentials never go in a user-info part.
 */
public final class DynamoDbDedupStoreProvider implements DedupStoreProvider {
    private static final UriParameters PARAMETERS = UriParameters.builder()
            .text("region", null, Pattern.compile("[a-z0-9]+(-[a-z0-9]+)*"),
                    "an AWS region: lower-case letters, digits and '-', for example eu-west-1")
            .httpUrl("endpoint")
            .duration("timeout", Duration.ofSeconds(2), Duration.ofMillis(1), Duration.ofMinutes(10))
            .integer("batchConcurrency", 16, 1, 256)
            .bool("createTable", false)
            .text("accessKeyId", null)
            .text("secretAccessKey", null)
            .build();

    @Override
    public Set<String> schemes() {
        return Set.of("dynamodb");
    }

    @Override
    public String artifact() {
        return "dev.dedup:dedup-store-dynamodb";
    }

    @Override
    public UriParameters parameters() {
        return PARAMETERS;
    }

    @Override
    public DedupStore open(StoreUri uri) {
        if (uri.hasUserInfo()) {
            throw new DedupConfigurationException("DynamoDB URI " + uri.redacted() + " has a user-info part; give"
                    + " credentials as accessKeyId and secretAccessKey parameters, or leave them to the SDK's default"
                    + " credentials chain");
        }
        String table = uri.hostsText().orElse("");
        if (table.isEmpty() || uri.path().isPresent()) {
            throw new DedupConfigurationException("DynamoDB URI " + uri.redacted() + " must name one table and"
                    + " nothing else before the '?'; expected dynamodb://<table>?region=<region>");
        }
        Duration timeout = uri.duration("timeout");
        ClientOverrideConfiguration overrides = ClientOverrideConfiguration.builder()
                .apiCallTimeout(timeout)
                .apiCallAttemptTimeout(timeout)
                .build();
        Region region = region(uri);
        AwsCredentialsProvider credentials = credentials(uri);
        URI endpoint = uri.httpUrl("endpoint").orElse(null);

        var syncBuilder = DynamoDbClient.builder().region(region).credentialsProvider(credentials)
                .overrideConfiguration(overrides).httpClient(UrlConnectionHttpClient.create());
        var asyncBuilder = DynamoDbAsyncClient.builder().region(region).credentialsProvider(credentials)
                .overrideConfiguration(overrides).httpClient(NettyNioAsyncHttpClient.create());
        if (endpoint != null) {
            syncBuilder.endpointOverride(endpoint);
            asyncBuilder.endpointOverride(endpoint);
        }
        DynamoDbClient client;
        DynamoDbAsyncClient asyncClient;
        try {
            client = syncBuilder.build();
        } catch (IllegalArgumentException | SdkClientException e) {
            throw new DedupConfigurationException("DynamoDB URI " + uri.redacted() + ": the AWS SDK refused the"
                    + " client settings: " + e.getMessage(), e);
        }
        try {
            asyncClient = asyncBuilder.build();
        } catch (RuntimeException e) {
            client.close();
            throw new DedupConfigurationException("DynamoDB URI " + uri.redacted() + ": the AWS SDK refused the"
                    + " client settings: " + e.getMessage(), e);
        }
        Runnable closeClients = () -> {
            client.close();
            asyncClient.close();
        };
        try {
            if (uri.bool("createTable")) {
                DynamoDbDedupTables.create(client, table);
            }
            return DynamoDbDedupStore.builder(client, table)
                    .namespace(uri.namespace())
                    .asyncClient(asyncClient)
                    .batchConcurrency(uri.integer("batchConcurrency"))
                    .onClose(closeClients)
                    .build();
        } catch (IllegalArgumentException e) {
            closeClients.run();
            throw new DedupConfigurationException("bad parameter in " + uri.redacted() + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeClients.run();
            throw e;
        }
    }

    private static Region region(StoreUri uri) {
        return uri.text("region").map(Region::of).orElseGet(() -> {
            if (uri.httpUrl("endpoint").isPresent()) {
                return Region.US_EAST_1; // an emulator ignores it, but the SDK wants one
            }
            throw new DedupConfigurationException("DynamoDB URI " + uri.redacted() + " needs region=<aws-region>,"
                    + " for example region=eu-west-1");
        });
    }

    private static AwsCredentialsProvider credentials(StoreUri uri) {
        var id = uri.text("accessKeyId");
        var secret = uri.text("secretAccessKey");
        if (id.isPresent() != secret.isPresent()) {
            throw new DedupConfigurationException("DynamoDB URI " + uri.redacted()
                    + " must give both accessKeyId and secretAccessKey, or neither (default credentials chain)");
        }
        return id.isPresent()
                ? StaticCredentialsProvider.create(AwsBasicCredentials.create(id.get(), secret.get()))
                : DefaultCredentialsProvider.builder().build();
    }
}
