package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import dev.dedup.store.dynamodb.DynamoDbDedupStore;
import java.net.URI;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The store built on the application's {@code DynamoDbClient} bean, on dynalite (the harness's DynamoDB emulator:
 * the service itself cannot run here).
 */
class DynamoDbClientStoreOnDynaliteTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DedupStoreAutoConfiguration.class))
            .withBean(DynamoDbClient.class, () -> DynamoDbClient.builder()
                    .endpointOverride(URI.create(Servers.dynamoDbEndpoint())).region(Region.US_EAST_1)
                    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                    .httpClient(UrlConnectionHttpClient.create()).build());

    @Test
    void aDynamoDbClientBeanGivesADynamoDbStoreInTheNamedTable() {
        runner.withPropertyValues("dedup.store.dynamodb-table=dedup-boot", "dedup.store.create-schema=true",
                "dedup.namespace=" + Servers.unique("boot-dynamo")).run(context -> {
                    DedupStore store = context.getBean(DedupStore.class);
                    assertThat(store).isInstanceOf(DynamoDbDedupStore.class);
                    assertThat(((DynamoDbDedupStore) store).table()).isEqualTo("dedup-boot");
                    StoreClaims.claimsOnce(store);
                });
    }

    @Test
    void withoutATableNameTheStartFailsNamingTheProperty() {
        runner.run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                .hasMessageContaining("dedup.store.dynamodb-table is not set"));
    }
}
