package dev.dedup.spring.boot;

import dev.dedup.tck.FaultProxy;
import java.net.URI;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The filter when its PostgreSQL store cannot be reached: the store is opened by URI through a fault-injecting
 * proxy, which then refuses and cuts every connection.
 */
abstract class StoreOutageContract {
    static final FaultProxy PROXY;

    static {
        URI jdbc = URI.create(Servers.postgresJdbcUrl().substring("jdbc:".length()));
        PROXY = FaultProxy.start(jdbc.getHost(), jdbc.getPort());
    }

    /** {@return the store URI: the test server's, through the proxy, with a 1 s timeout} */
    static String storeUri() {
        URI jdbc = URI.create(Servers.postgresJdbcUrl().substring("jdbc:".length()));
        return "jdbc:postgresql://" + PROXY.host() + ":" + PROXY.port() + jdbc.getRawPath() + "?"
                + jdbc.getRawQuery() + "&timeout=1s&createSchema=true&namespace=" + Servers.unique("boot-outage");
    }

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry meters;

    Http http;

    @BeforeEach
    void client() {
        http = new Http(port);
    }

    @AfterEach
    void heal() {
        PROXY.heal();
    }

    void storeDown() {
        PROXY.refuseConnections(true);
        PROXY.cutConnections();
    }

    double outages(String action) {
        var counter = meters.find(MeteredStoreOutages.METER).tag("action", action).counter();
        return counter == null ? 0 : counter.count();
    }
}
