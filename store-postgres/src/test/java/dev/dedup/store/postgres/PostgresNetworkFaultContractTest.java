package dev.dedup.store.postgres;

import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.tck.NetworkFaultContractTest;
import java.net.InetSocketAddress;
import java.net.URI;
import org.junit.jupiter.api.BeforeAll;

/** The network-fault contract on the real PostgreSQL, through a store opened by URI with a 1 s timeout. */
class PostgresNetworkFaultContractTest extends NetworkFaultContractTest {

    @BeforeAll
    static void createTheTable() {
        try (var pool = PostgresTestSupport.pool(1)) {
            PostgresDedupStore.builder(pool).validateSchema(false).build().createSchema();
        }
    }

    @Override
    protected InetSocketAddress server() {
        URI jdbc = URI.create(PostgresTestSupport.jdbcUrl().substring("jdbc:".length()));
        return new InetSocketAddress(jdbc.getHost(), jdbc.getPort());
    }

    @Override
    protected DedupStore openStoreVia(String host, int port, String namespace) {
        return DedupStores.open("jdbc:postgresql://" + host + ":" + port + "/dedup?user=postgres&namespace="
                + namespace + "&timeout=1s&poolSize=2");
    }
}
