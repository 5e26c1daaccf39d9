package dev.dedup.spring.boot;

import com.mongodb.client.MongoClient;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.store.mongo.MongoDedupStore;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The MongoDB store on the application's (sync) {@code MongoClient} bean, in {@code dedup.store.mongodb-database};
 * the client stays the application's. When the application also has a reactive-streams {@code MongoClient} bean
 * (Spring Boot makes one when that driver is on the class path), the store's {@code async()} is native on it; without
 * one, {@code async()} throws {@code UnsupportedOperationException}. With {@code dedup.store.create-schema=true} it
 * creates the TTL index; without, a missing index fails the start with the command that creates it.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({MongoDedupStore.class, MongoClient.class})
class MongoStoreConfiguration {

    @Bean
    @ConditionalOnMissingBean(DedupStore.class)
    @ConditionalOnSingleCandidate(MongoClient.class)
    DedupStore dedupStore(MongoClient client, DedupProperties properties,
            ObjectProvider<ReactiveMongoClient> reactive) {
        String database = properties.getStore().getMongodbDatabase();
        if (database == null || database.isBlank()) {
            throw new DedupConfigurationException("the application has a MongoClient, so the dedup store is built on"
                    + " it, but dedup.store.mongodb-database is not set; set it to the database's name, or set"
                    + " dedup.store.uri");
        }
        boolean createSchema = properties.getStore().isCreateSchema();
        // With create-schema the TTL index is made right after the build, so the build must not check for it first.
        MongoDedupStore.Builder builder = MongoDedupStore.builder(client, database).validateIndexes(!createSchema);
        if (properties.getNamespace() != null) {
            builder.namespace(properties.getNamespace());
        }
        StoreTimeout.applyTo(properties, builder::timeout);
        reactive.ifAvailable(found -> found.attachTo(builder));
        MongoDedupStore store = builder.build();
        if (createSchema) {
            store.createIndexes();
        }
        return store;
    }

    /** The application's reactive client, for the store's native {@code async()}. */
    @FunctionalInterface
    interface ReactiveMongoClient {
        void attachTo(MongoDedupStore.Builder builder);
    }

    /** Only with the reactive-streams driver on the class path: the type is not loaded otherwise. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "com.mongodb.reactivestreams.client.MongoClient")
    static class ReactiveClientConfiguration {
        @Bean
        @ConditionalOnSingleCandidate(com.mongodb.reactivestreams.client.MongoClient.class)
        ReactiveMongoClient dedupReactiveMongoClient(com.mongodb.reactivestreams.client.MongoClient client) {
            return builder -> builder.reactive(client);
        }
    }
}
