package dev.dedup.store.mysql;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.tck.NetworkFaultContractTest;
import java.net.InetSocketAddress;
import java.net.URI;
import org.junit.jupiter.api.BeforeAll;

/** The network-fault contract on the real MariaDB, through a store opened by URI with a 1 s timeout. */
class MariaDbNetworkFaultContractTest extends NetworkFaultContractTest {

    @BeforeAll
    static void createTheTable() {
        try (HikariDataSource pool = MariaDbTestSupport.pool("TRANSACTION_READ_COMMITTED", 1)) {
            MysqlDedupStore.builder(pool).validateSchema(false).build().createSchema();
        }
    }

    @Override
    protected InetSocketAddress server() {
        URI address = MariaDbTestSupport.address();
        return new InetSocketAddress(address.getHost(), address.getPort());
    }

    @Override
    protected DedupStore openStoreVia(String host, int port, String namespace) {
        URI address = MariaDbTestSupport.address();
        return DedupStores.open("mariadb://" + host + ":" + port + address.getPath() + "?" + address.getQuery()
                + "&namespace=" + namespace + "&timeout=1s&poolSize=2");
    }
}
