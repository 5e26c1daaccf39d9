package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import dev.dedup.DedupStore;
import dev.dedup.store.mongo.MongoDedupStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
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
