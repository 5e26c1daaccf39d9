package dev.dedup.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.zaxxer.hikari.HikariConfig;
import dev.dedup.Claim;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.spi.StoreUri;
import dev.dedup.tck.NoSecrets;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** How a URI becomes the pool's settings, which parameters are refused, and that no credential leaks. */
class PostgresDedupStoreProviderTest {

    private static HikariConfig pool(String uri) {
        HikariConfig pool = new HikariConfig();
        PostgresDedupStoreProvider.applyLocation(
                StoreUri.parse(uri, Map.of()).check(new PostgresDedupStoreProvider().parameters()), pool);
        return pool;
    }

    @Test
    @DisplayName("user-info is decoded by RFC 3986 (a + stays a plus); driver parameters become properties, not URL text")
    void mapsTheUriToThePool() {
        HikariConfig pool = pool("postgresql://app%40corp:p+w%2Bd%3A@h1:5432,[::1]:5433/app"
                + "?sslmode=require&ApplicationName=orders%20consumer&namespace=n&table=t");

        assertThat(pool.getJdbcUrl()).isEqualTo("jdbc:postgresql://h1:5432,[::1]:5433/app");
        assertThat(pool.getUsername()).isEqualTo("app@corp");
        assertThat(pool.getPassword()).isEqualTo("p+w+d:");
        Properties properties = pool.getDataSourceProperties();
        assertThat(properties).containsEntry("sslmode", "require").containsEntry("ApplicationName", "orders consumer")
                .doesNotContainKeys("namespace", "table");

        HikariConfig jdbc = pool("jdbc:postgresql://h/app?user=svc&password=a+b");
        assertThat(jdbc.getUsername()).isEqualTo("svc");
        assertThat(jdbc.getPassword()).isEqualTo("a+b");
        assertThat(jdbc.getDataSourceProperties()).isEmpty();
    }

    @Test
    @DisplayName("misspelt dedup and driver parameters fail naming the nearest one, instead of opening namespace default")
    void misspeltParametersAreRefused() {
        assertThatThrownBy(() -> DedupStores.open("postgresql://h/db?namepsace=orders"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("unknown parameter 'namepsace'")
                .hasMessageContaining("Did you mean namespace?")
                .hasMessageContaining("[createSchema, namespace, poolSize, table, timeout]");
        assertThatThrownBy(() -> DedupStores.open("postgresql://h/db?tabel=claims"))
                .hasMessageContaining("Did you mean table?");
        assertThatThrownBy(() -> DedupStores.open("postgresql://h/db?timeuot=1s"))
                .hasMessageContaining("Did you mean timeout?");
        assertThatThrownBy(() -> DedupStores.open("postgresql://h/db?sslmdoe=require"))
                .hasMessageContaining("Did you mean sslmode?");
        // pgjdbc reads ApplicationName only; this spelling would be ignored by the driver.
        assertThatThrownBy(() -> DedupStores.open("postgresql://h/db?applicationName=x"))
                .hasMessageContaining("Did you mean ApplicationName?");
        assertThatThrownBy(() -> DedupStores.open("postgres://h/db?readOnly=true"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("unknown parameter 'readOnly'");
    }

    @Test
    @DisplayName("booleans, numbers and durations are strict and bounded, the range in the message")
    void valuesAreChecked() {
        assertThatThrownBy(() -> DedupStores.open("postgresql://h/db?createSchema=yes"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("createSchema=yes").hasMessageContaining("true or false");
        assertThatThrownBy(() -> DedupStores.open("postgresql://h/db?poolSize=99999999999"))
                .hasMessageContaining("poolSize=99999999999").hasMessageContaining("[1, 200]");
        assertThatThrownBy(() -> DedupStores.open("postgresql://h/db?timeout=99999999999999999d"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("[1s, 10m]");
        assertThatThrownBy(() -> DedupStores.open("postgresql://h:99999/db"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("[1, 65535]");
    }

    @Test
    @DisplayName("no credential shows when the server cannot be reached or a parameter is refused")
    void secretsStayOutOfFailures() {
        Throwable unreachable = catchThrowable(() -> DedupStores.open("postgresql://app:pa55-s3cret@127.0.0.1:1/db"
                + "?timeout=1s&sslpassword=ssl-s3cret&namespace=n"));
        assertThat(unreachable).isInstanceOf(DedupStoreException.class);
        NoSecrets.assertNoSecret(unreachable, "s3cret");

        Throwable refused = catchThrowable(() -> DedupStores.open("jdbc:postgresql://app:pa55-s3cret@127.0.0.1:1/db"
                + "?password=pw-s3cret&namepsace=n"));
        assertThat(refused).isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("jdbc:postgresql://***@127.0.0.1:1/db?password=***&namepsace=n");
        NoSecrets.assertNoSecret(refused, "s3cret");
    }

    @Test
    @DisplayName("driver parameters reach the server: a store opened with sslmode and ApplicationName works")
    void driverParametersReachTheDriver() {
        String uri = PostgresTestSupport.postgresqlUri() + "?namespace=uri-driver&sslmode=disable"
                + "&ApplicationName=dedup-provider-test&connectTimeout=2&createSchema=true";
        try (DedupStore store = DedupStores.open(uri)) {
            assertThat(store.claim("k-" + System.nanoTime(), Duration.ofSeconds(5))).isInstanceOf(Claim.class);
        }
    }
}
