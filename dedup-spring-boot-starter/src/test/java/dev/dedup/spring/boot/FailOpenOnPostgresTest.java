package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@code dedup.http.fail-open=true}: with the store down, protected requests run unprotected, and are counted. */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"dedup.http.paths=/payments", "dedup.http.fail-open=true"})
class FailOpenOnPostgresTest extends StoreOutageContract {

    @DynamicPropertySource
    static void store(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);   // the application's own, unused here
        registry.add("dedup.store.uri", StoreOutageContract::storeUri);
    }

    @Test
    void theStoreDownRunsTheRequestWithoutDeduplication() {
        String key = Servers.unique("k");
        String body = Servers.unique("open");
        storeDown();

        HttpResponse<String> first = http.post("/payments", key, body);
        HttpResponse<String> retry = http.post("/payments", key, body);

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(TestApplication.runs(body)).isEqualTo(2);   // what fail-open costs: the retry ran again
        assertThat(outages("passed-through")).isEqualTo(2);
    }
}
