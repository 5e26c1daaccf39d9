package dev.dedup.store.dynamodb;

import dev.dedup.DedupConfigurationException;
import java.time.Duration;
import java.util.Optional;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveStatus;

/** Creates and checks the dedup table: partition key {@code pk} (S), on-demand billing, TTL on {@code ttl_epoch_s}. */
public final class DynamoDbDedupTables {
    private static final Logger log = LoggerFactory.getLogger(DynamoDbDedupTables.class);
    private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z0-9_.-]{3,255}");

    private DynamoDbDedupTables() {}

    /**
     * Creates the table if absent (on-demand billing), waits until it is active, and enables TTL deletion on
     * {@code ttl_epoch_s}. Idempotent. An endpoint without the TTL API (an emulator) is reported, not fatal.
     *
     * @param client a client whose credentials may create tables and update TTL
     * @param table the table's name, 3 to 255 of {@code A-Z a-z 0-9 _ . -}
     * @return whether the table was created here and whether TTL deletion is on
     * @throws IllegalArgumentException if {@code table} is not a valid DynamoDB table name
     * @throws dev.dedup.DedupConfigurationException if an existing table has another key schema
     * @throws dev.dedup.DedupStoreException if DynamoDB could not be reached or refused to create the table
     */
    public static DynamoDbTableReport create(DynamoDbClient client, String table) {
        checkTableName(table);
        boolean created = false;
        try {
            client.createTable(request -> request.tableName(table)
                    .billingMode(BillingMode.PAY_PER_REQUEST)
                    .attributeDefinitions(AttributeDefinition.builder().attributeName(DynamoDbItems.PK)
                            .attributeType(ScalarAttributeType.S).build())
                    .keySchema(KeySchemaElement.builder().attributeName(DynamoDbItems.PK).keyType(KeyType.HASH)
                            .build()));
            created = true;
        } catch (ResourceInUseException exists) {
            // Created before: check it below.
        } catch (RuntimeException e) {
            throw DynamoDbErrors.translate("createTable", e, table);
        }
        try {
            client.waiter().waitUntilTableExists(request -> request.tableName(table));
        } catch (RuntimeException e) {
            throw DynamoDbErrors.translate("createTable (waiting until active)", e, table);
        }
        validate(client, table);
        Optional<String> ttlProblem = enableTtl(client, table);
        ttlProblem.ifPresent(problem -> log.warn("dedup table {} has no TTL deletion: {}. Claims stay correct;"
                + " expired items just stay until deleted.", table, problem));
        return new DynamoDbTableReport(table, created, ttlProblem.isEmpty(), ttlProblem);
    }

    private static Optional<String> enableTtl(DynamoDbClient client, String table) {
        try {
            var current = client.describeTimeToLive(request -> request.tableName(table)).timeToLiveDescription();
            if (current.timeToLiveStatus() == TimeToLiveStatus.ENABLED
                    && DynamoDbItems.TTL.equals(current.attributeName())) {
                return Optional.empty();
            }
            client.updateTimeToLive(request -> request.tableName(table)
                    .timeToLiveSpecification(spec -> spec.enabled(true).attributeName(DynamoDbItems.TTL)));
            return Optional.empty();
        } catch (DynamoDbException e) {
            String code = e.awsErrorDetails() == null ? "" : e.awsErrorDetails().errorCode();
            if ("UnknownOperationException".equals(code)) {
                return Optional.of("this endpoint does not support the TTL API (UpdateTimeToLive); enable TTL on"
                        + " attribute " + DynamoDbItems.TTL + " where the table really lives");
            }
            return Optional.of("UpdateTimeToLive failed with " + code + " (HTTP " + e.statusCode() + "); enable TTL on"
                    + " attribute " + DynamoDbItems.TTL + " by hand");
        }
    }

    /**
     * Fails with what to do when the table is missing or its key schema is not {@code pk} (S, HASH).
     *
     * @param client a client whose credentials may call DescribeTable
     * @param table the table's name
     * @throws DedupConfigurationException if the table is missing (the message holds the command that creates it)
     *     or has another key schema
     * @throws dev.dedup.DedupStoreException if DynamoDB could not be reached
     */
    public static void validate(DynamoDbClient client, String table) {
        validate(client, table, null);
    }

    /** As {@link #validate(DynamoDbClient, String)}, the call bounded by {@code timeout} (null: the client's). */
    static void validate(DynamoDbClient client, String table, Duration timeout) {
        TableDescription description;
        try {
            description = client.describeTable(request -> request.tableName(table).overrideConfiguration(
                    timeout == null ? null : AwsRequestOverrideConfiguration.builder().apiCallTimeout(timeout).build()))
                    .table();
        } catch (ResourceNotFoundException missing) {
            throw new DedupConfigurationException("DynamoDB table " + table + " does not exist; create it with"
                    + " DynamoDbDedupTables.create(client, \"" + table + "\") or: aws dynamodb create-table"
                    + " --table-name " + table + " --billing-mode PAY_PER_REQUEST --attribute-definitions"
                    + " AttributeName=pk,AttributeType=S --key-schema AttributeName=pk,KeyType=HASH", missing);
        } catch (RuntimeException e) {
            throw DynamoDbErrors.translate("describeTable", e, table);
        }
        boolean keyIsPk = description.keySchema().size() == 1
                && description.keySchema().get(0).attributeName().equals(DynamoDbItems.PK)
                && description.keySchema().get(0).keyType() == KeyType.HASH;
        boolean pkIsString = description.attributeDefinitions().stream()
                .anyMatch(a -> a.attributeName().equals(DynamoDbItems.PK) && a.attributeType() == ScalarAttributeType.S);
        if (!keyIsPk || !pkIsString) {
            throw new DedupConfigurationException("DynamoDB table " + table + " must have exactly one key, the"
                    + " partition key pk of type S, but has " + description.keySchema() + " with "
                    + description.attributeDefinitions());
        }
    }

    static String checkTableName(String table) {
        if (table == null || !TABLE_NAME.matcher(table).matches()) {
            throw new IllegalArgumentException("table must be 3 to 255 of A-Z a-z 0-9 _ . -, but was "
                    + (table == null ? "null" : "'" + table + "'"));
        }
        return table;
    }
}
