package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.Duplicate;
import dev.dedup.micrometer.MeteredDedupStore;
import dev.dedup.store.mongo.MongoDedupStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The store built on the application's {@code MongoClient} bean, on mongo-java-server, an in-process MongoDB
 * wire-protocol emulator (no mongod can run here; see docs/mongodb.md).
 */
class MongoClientStoreOnMongoJavaServerTest {
    private static MongoServer server;
    private static String url;

    @BeforeAll
    static void start() {
        server = new MongoServer(new MemoryBackend());
        url = "mongodb://127.0.0.1:" + server.bind().getPort();
    }

    @AfterAll
    static void stop() {
        server.shutdownNow();
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DedupStoreAutoConfiguration.class))
            .withBean(MongoClient.class, () -> MongoClients.create(url));

    @Test
    void aMongoClientBeanGivesAMongoStoreInTheNamedDatabase() {
        runner.withPropertyValues("dedup.store.mongodb-database=app", "dedup.store.create-schema=true",
                "dedup.namespace=" + Servers.unique("boot-mongo")).run(context -> {
                    DedupStore store = context.getBean(DedupStore.class);
                    assertThat(store).isInstanceOf(MongoDedupStore.class);
                    StoreClaims.claimsOnce(store);
                });
    }

    @Test
    void withoutAReactiveClientBeanTheStoresAsyncIsNotNative() {
        runner.withPropertyValues("dedup.store.mongodb-database=app", "dedup.store.create-schema=true")
                .run(context -> assertThatThrownBy(() -> context.getBean(DedupStore.class).async())
                        .isInstanceOf(UnsupportedOperationException.class));
    }

    @Test
    void meteredWithoutAReactiveClientBeanTheStoresAsyncStillThrowsAsTheStoreDoes() {
        runner.withConfiguration(AutoConfigurations.of(DedupMetricsAutoConfiguration.class))
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("dedup.store.mongodb-database=app", "dedup.store.create-schema=true")
                .run(context -> {
                    assertThat(context.getBean(DedupStore.class)).isInstanceOf(MeteredDedupStore.class);
                    assertThatThrownBy(() -> context.getBean(DedupStore.class).async())
                            .isInstanceOf(UnsupportedOperationException.class)
                            .hasMessageContaining("AsyncDedupStore.onExecutor");
                });
    }

    @Test
    void aReactiveClientBeanBesideItMakesTheStoresAsyncNative() {
        String namespace = Servers.unique("boot-mongo-async");
        runner.withBean("reactiveMongoClient", com.mongodb.reactivestreams.client.MongoClient.class,
                        () -> com.mongodb.reactivestreams.client.MongoClients.create(url))
                .withPropertyValues("dedup.store.mongodb-database=app", "dedup.store.create-schema=true",
                        "dedup.namespace=" + namespace)
                .run(context -> {
                    DedupStore store = context.getBean(DedupStore.class);
                    ClaimResult claimed = store.async().claim("order-1", Duration.ofMinutes(1))
                            .toCompletableFuture().get(10, TimeUnit.SECONDS);
                    assertThat(claimed).isInstanceOf(Claim.class);
                    // The same record through the sync client: both clients are on one deployment and database.
                    assertThat(store.claim("order-1", Duration.ofMinutes(1))).isInstanceOf(Duplicate.class);
                });
    }

    @Test
    void withoutTheReactiveDriverOnTheClassPathTheStoreStillStarts() {
        runner.withClassLoader(new FilteredClassLoader("com.mongodb.reactivestreams"))
                .withPropertyValues("dedup.store.mongodb-database=app", "dedup.store.create-schema=true",
                        "dedup.namespace=" + Servers.unique("boot-mongo-sync"))
                .run(context -> StoreClaims.claimsOnce(context.getBean(DedupStore.class)));
    }

    @Test
    void withoutItsIndexTheStartFailsWithTheCommandThatCreatesIt() {
        runner.withPropertyValues("dedup.store.mongodb-database=" + Servers.unique("no-index"))
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("has no TTL index on expiresAt"));
    }

    @Test
    void withoutADatabaseNameTheStartFailsNamingTheProperty() {
        runner.run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                .hasMessageContaining("dedup.store.mongodb-database is not set"));
    }
}
