package dev.dedup.spring.boot;

import dev.dedup.tck.FaultProxy;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpResponse;
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

    /** The store down: a protected request is 503 and its handler does not run; once it is back, it runs. */
    void failsClosedThenServesAgain(String body) {
        assertThat(http.post("/payments", Servers.unique("k"), body + "-before").statusCode()).isEqualTo(201);

        storeDown();
        HttpResponse<String> down = http.post("/payments", Servers.unique("k"), body);

        assertThat(down.statusCode()).isEqualTo(503);
        assertThat(down.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(down.body()).doesNotContain("postgres").doesNotContain("password");
        assertThat(TestApplication.runs(body)).isZero();
        assertThat(outages("rejected")).isEqualTo(1);

        PROXY.heal();
        // Pooled connections the cut left behind fail once each (a pool re-checks only those idle over 500 ms), so
        // the store serves again within moments, not necessarily at the first request.
        HttpResponse<String> back = http.post("/payments", Servers.unique("k"), body);
        for (int attempt = 1; back.statusCode() == 503 && attempt < 20; attempt++) {
            back = http.post("/payments", Servers.unique("k"), body);
        }
        assertThat(back.statusCode()).isEqualTo(201);
        assertThat(TestApplication.runs(body)).isEqualTo(1);
    }
}
