package dev.dedup.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/** The table helper and the start-up check, on dynalite (which lacks the TTL API: that path is reported). */
class DynamoDbTablesOnDynaliteTest {
    private static DynamoDbClient client;

    @BeforeAll
    static void connect() {
        client = DynamoDbTestSupport.client(Duration.ofSeconds(10));
    }

    @AfterAll
    static void disconnect() {
        client.close();
    }

    private static String freshTable() {
        return "tables-test-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    @DisplayName("create makes an on-demand table keyed by pk, is idempotent, and reports the missing TTL API")
    void createsTheTableIdempotently() {
        String table = freshTable();

        DynamoDbTableReport first = DynamoDbDedupTables.create(client, table);
        DynamoDbTableReport second = DynamoDbDedupTables.create(client, table);

        assertThat(first.created()).isTrue();
        assertThat(second.created()).isFalse();
        var description = client.describeTable(r -> r.tableName(table)).table();
        assertThat(description.billingModeSummary().billingMode()).isEqualTo(BillingMode.PAY_PER_REQUEST);
        assertThat(description.keySchema()).singleElement().satisfies(key -> {
            assertThat(key.attributeName()).isEqualTo("pk");
            assertThat(key.keyType()).isEqualTo(KeyType.HASH);
        });
        // dynalite has no UpdateTimeToLive: said plainly, not hidden, and not fatal.
        assertThat(first.ttlEnabled()).isFalse();
        assertThat(first.ttlProblem()).hasValueSatisfying(problem -> assertThat(problem)
                .contains("does not support the TTL API").contains("ttl_epoch_s"));
        try (DedupStore store = DynamoDbDedupStore.builder(client, table).build()) {
            assertThat(store.claim("k", Duration.ofSeconds(5))).isInstanceOf(Claim.class);
        }
    }

    @Test
    @DisplayName("a missing table fails at start-up with how to create it")
    void missingTableIsExplained() {
        String table = freshTable();

        assertThatThrownBy(() -> DynamoDbDedupStore.builder(client, table).build())
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("does not exist")
                .hasMessageContaining("DynamoDbDedupTables.create")
                .hasMessageContaining("AttributeName=pk,KeyType=HASH");
    }

    @Test
    @DisplayName("a table with another key schema is refused at start-up")
    void wrongKeySchemaIsRefused() {
        String table = freshTable();
        client.createTable(r -> r.tableName(table).billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(AttributeDefinition.builder().attributeName("id")
                        .attributeType(ScalarAttributeType.S).build())
                .keySchema(KeySchemaElement.builder().attributeName("id").keyType(KeyType.HASH).build()));

        assertThatThrownBy(() -> DynamoDbDedupStore.builder(client, table).build())
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("partition key pk of type S");
    }

    @Test
    @DisplayName("bad table names and URI parameters are rejected with what is allowed")
    void badInputIsExplained() {
        assertThatThrownBy(() -> DynamoDbDedupStore.builder(client, "a b"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'a b'");
        assertThatThrownBy(() -> DedupStores.open("dynamodb://dedup_claims"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("region");
        assertThatThrownBy(() -> DedupStores.open(DynamoDbTestSupport.uri("dedup_claims", "x") + "&tabel=typo"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("unknown parameter 'tabel'");
        assertThatThrownBy(() -> DedupStores.open("dynamodb://t?region=us-east-1&accessKeyId=only"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("both accessKeyId");
    }

    @Test
    @DisplayName("createTable=true in the URI creates the table")
    void uriCreatesTheTable() {
        String table = freshTable();
        try (DedupStore store = DedupStores.open(DynamoDbTestSupport.uri(table, "uri") + "&createTable=true")) {
            assertThat(store.claim("k", Duration.ofSeconds(5))).isInstanceOf(Claim.class);
        }
    }
}
