package dev.dedup.spring.boot;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.store.dynamodb.DynamoDbDedupStore;
import dev.dedup.store.dynamodb.DynamoDbDedupTables;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** The DynamoDB store on the application's {@code DynamoDbClient} bean, in {@code dedup.store.dynamodb-table}. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({DynamoDbDedupStore.class, DynamoDbClient.class})
class DynamoDbStoreConfiguration {

    @Bean
    @ConditionalOnMissingBean(DedupStore.class)
    @ConditionalOnSingleCandidate(DynamoDbClient.class)
    DedupStore dedupStore(DynamoDbClient client, DedupProperties properties) {
        String table = properties.getStore().getDynamodbTable();
        if (table == null || table.isBlank()) {
            throw new DedupConfigurationException("the application has a DynamoDbClient, so the dedup store is built"
                    + " on it, but dedup.store.dynamodb-table is not set; set it to the table's name (create the"
                    + " table with dedup.store.create-schema=true), or set dedup.store.uri");
        }
        if (properties.getStore().isCreateSchema()) {
            DynamoDbDedupTables.create(client, table);
        }
        DynamoDbDedupStore.Builder builder = DynamoDbDedupStore.builder(client, table);
        if (properties.getNamespace() != null) {
            builder.namespace(properties.getNamespace());
        }
        StoreTimeout.applyTo(properties, builder::timeout);
        return builder.build();
    }
}
