package dev.dedup.store.dynamodb;

import dev.dedup.DedupConfigurationException;
import dev.dedup.spi.DedupStore;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.StoreUri;
import java.net.URI;
import java.time.Duration;
import java.util.Set;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Opens {@code dynamodb://dedup_claims?region=eu-west-1&namespace=orders}. Parameters: {@code region} (required
 * unless {@code endpoint} is given, then default us-east-1), {@code endpoint} (an override such as a local
 * emulator), {@code namespace}, {@code timeout} (default 2s, for each whole call including retries),
 * {@code batchConcurrency} (default 16), {@code createTable} (default false), and {@code accessKeyId} with
 * {@code secretAccessKey} (else the SDK's default credentials chain). The table name is the URI's host part.
 */
public final class DynamoDbDedupStoreProvider implements DedupStoreProvider {
    private static final Set<String> PARAMETERS = Set.of("region", "endpoint", "namespace", "timeout",
            "batchConcurrency", "createTable", "accessKeyId", "secretAccessKey");

    @Override
    public Set<String> schemes() {
        return Set.of("dynamodb");
    }

    @Override
    public String artifact() {
        return "dev.dedup:dedup-store-dynamodb";
    }

    @Override
    public DedupStore open(StoreUri uri) {
        uri.requireOnly(PARAMETERS);
        String table = uri.location().startsWith("//") ? uri.location().substring(2) : uri.location();
        if (table.isEmpty()) {
            throw new DedupConfigurationException("DynamoDB URI " + uri.redacted() + " names no table; expected"
                    + " dynamodb://<table>?region=<region>");
        }
        Duration timeout = uri.duration("timeout", Duration.ofSeconds(2));
        ClientOverrideConfiguration overrides = ClientOverrideConfiguration.builder()
                .apiCallTimeout(timeout)
                .apiCallAttemptTimeout(timeout)
                .build();
        Region region = region(uri);
        AwsCredentialsProvider credentials = credentials(uri);
        URI endpoint = uri.parameter("endpoint").map(URI::create).orElse(null);

        var syncBuilder = DynamoDbClient.builder().region(region).credentialsProvider(credentials)
                .overrideConfiguration(overrides).httpClient(UrlConnectionHttpClient.create());
        var asyncBuilder = DynamoDbAsyncClient.builder().region(region).credentialsProvider(credentials)
                .overrideConfiguration(overrides).httpClient(NettyNioAsyncHttpClient.create());
        if (endpoint != null) {
            syncBuilder.endpointOverride(endpoint);
            asyncBuilder.endpointOverride(endpoint);
        }
        DynamoDbClient client = syncBuilder.build();
        DynamoDbAsyncClient asyncClient = asyncBuilder.build();
        Runnable closeClients = () -> {
            client.close();
            asyncClient.close();
        };
        try {
            if (Boolean.parseBoolean(uri.parameter("createTable").orElse("false"))) {
                DynamoDbDedupTables.create(client, table);
            }
            return DynamoDbDedupStore.builder(client, table)
                    .namespace(uri.namespace())
                    .asyncClient(asyncClient)
                    .batchConcurrency(Integer.parseInt(uri.parameter("batchConcurrency").orElse("16")))
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
        return uri.parameter("region").map(Region::of).orElseGet(() -> {
            if (uri.parameter("endpoint").isPresent()) {
                return Region.US_EAST_1; // an emulator ignores it, but the SDK wants one
            }
            throw new DedupConfigurationException("DynamoDB URI " + uri.redacted() + " needs region=<aws-region>");
        });
    }

    private static AwsCredentialsProvider credentials(StoreUri uri) {
        var id = uri.parameter("accessKeyId");
        var secret = uri.parameter("secretAccessKey");
        if (id.isPresent() != secret.isPresent()) {
            throw new DedupConfigurationException("DynamoDB URI " + uri.redacted()
                    + " must give both accessKeyId and secretAccessKey, or neither (default credentials chain)");
        }
        return id.isPresent()
                ? StaticCredentialsProvider.create(AwsBasicCredentials.create(id.get(), secret.get()))
                : DefaultCredentialsProvider.builder().build();
    }
}
