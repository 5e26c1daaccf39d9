package dev.dedup.store.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.dedup.Claim;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.Duplicate;
import dev.dedup.jdbc.UriPool;
import dev.dedup.spi.StoreUri;
import dev.dedup.tck.NoSecrets;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.mariadb.jdbc.MariaDbDataSource;

/** Opening by URI: the four schemes, which parameters are refused, and that no credential leaks. */
class MysqlDedupStoreProviderTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"mysql", "mariadb", "jdbc:mysql", "jdbc:mariadb"})
    @DisplayName("every scheme opens a store on the same server through the MariaDB driver, sharing the records")
    void everySchemeOpens(String scheme) {
        String key = "k-" + UUID.randomUUID();
        String uri = scheme + "://" + MariaDbTestSupport.hostAndDatabase() + "&namespace=uri-schemes"
                + "&connectTimeout=2000&createSchema=true";
        try (DedupStore store = DedupStores.open(uri);
                DedupStore other = DedupStores.open(MariaDbTestSupport.jdbcUrl() + "&namespace=uri-schemes")) {
            assertThat(store.claim(key, Duration.ofSeconds(5))).isInstanceOf(Claim.class);
            assertThat(other.claim(key, Duration.ofSeconds(5))).isInstanceOf(Duplicate.class);
        }
    }

    @Test
    @DisplayName("misspelt parameters fail naming the nearest one; store-breaking driver settings are refused")
    void misspeltParametersAreRefused() {
        assertThatThrownBy(() -> DedupStores.open("mysql://h/db?namepsace=orders"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("unknown parameter 'namepsace'")
                .hasMessageContaining("Did you mean namespace?")
                .hasMessageContaining("[createSchema, namespace, poolSize, table, timeout]");
        assertThatThrownBy(() -> DedupStores.open("mariadb://h/db?sslMdoe=trust"))
                .hasMessageContaining("Did you mean sslMode?");
        assertThatThrownBy(() -> DedupStores.open("mysql://h/db?useAffectedRows=true"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("unknown parameter 'useAffectedRows'");
        assertThatThrownBy(() -> DedupStores.open("jdbc:mysql://h/db?allowMultiQueries=true"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("unknown parameter 'allowMultiQueries'");
        assertThatThrownBy(() -> DedupStores.open("mysql://h/db?trustCertificateKeyStoreUrl=file:/ca.jks"))
                .as("MySQL Connector/J's name, which MariaDB Connector/J would ignore")
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("'trustCertificateKeyStoreUrl' in mysql://h/db?trustCertificateKeyStoreUrl=")
                .hasMessageContaining("not a setting of MariaDB Connector/J, which serves this store")
                .hasMessageContaining("trustStore");
        assertThatThrownBy(() -> DedupStores.open("mysql://h/db?table=a.b.c"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("but was 'a.b.c'");
    }

    @Test
    @DisplayName("no credential shows when the server cannot be reached or a parameter is refused")
    void secretsStayOutOfFailures() {
        Throwable unreachable = catchThrowable(() -> DedupStores.open("mysql://app:pa55-s3cret@127.0.0.1:1/db"
                + "?timeout=1s&trustStorePassword=ts-s3cret&namespace=n"));
        assertThat(unreachable).isInstanceOf(DedupStoreException.class)
                .hasMessageContaining("127.0.0.1:1/db");
        NoSecrets.assertNoSecret(unreachable, "s3cret");

        Throwable refused = catchThrowable(() -> DedupStores.open("jdbc:mariadb://app:pa55-s3cret@127.0.0.1:1/db"
                + "?password=pw-s3cret&namepsace=n"));
        assertThat(refused).isInstanceOf(DedupConfigurationException.class);
        NoSecrets.assertNoSecret(refused, "s3cret");
    }

    @Test
    @DisplayName("a lock wait on a store opened by URI ends by the query timeout, with the connection still whole")
    void lockWaitEndsByTheQueryTimeout() throws SQLException {
        String key = "locked-" + UUID.randomUUID();
        try (DedupStore store = DedupStores.open(MariaDbTestSupport.jdbcUrl()
                        + "&namespace=uri-lock-wait&timeout=1s&poolSize=1&createSchema=true");
                Connection locker = DriverManager.getConnection(MariaDbTestSupport.jdbcUrl())) {
            locker.setAutoCommit(false);
            try (PreparedStatement insert = locker.prepareStatement("INSERT INTO `dedup_claims` (`namespace`, `key`,"
                    + " `owner`, `state`, `expires_us`, `created_us`) VALUES (?, ?, 'other', 'IN_PROGRESS', 0, 0)")) {
                insert.setBytes(1, "uri-lock-wait".getBytes(StandardCharsets.UTF_8));
                insert.setBytes(2, key.getBytes(StandardCharsets.UTF_8));
                insert.executeUpdate(); // holds the key's row until the rollback
            }
            Throwable failure = catchThrowable(() -> store.claim(key, Duration.ofSeconds(5)));
            locker.rollback();

            assertThat(failure).isInstanceOf(DedupStoreException.class).hasRootCauseInstanceOf(SQLException.class);
            Throwable root = failure;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            assertThat(((SQLException) root).getSQLState()).as("the server's error, not a broken connection").doesNotStartWith("08");
            assertThat(store.claim(key, Duration.ofSeconds(5))).isInstanceOf(Claim.class);
        }
    }

    @Test
    @DisplayName("driver passwords reach the driver, and are not left in the pool's settings, which HikariCP logs")
    void driverPasswordsStayOutOfThePoolSettings() {
        StoreUri uri = StoreUri.parse("mariadb://127.0.0.1:1/db?namespace=n&keyStorePassword=ks-s3cret"
                + "&trustStorePassword=ts-s3cret", Map.of()).check(new MysqlDedupStoreProvider().parameters());
        Properties given = new Properties();
        try (UriPool pool = UriPool.open(uri, "jdbc:mariadb", "mysql://host:3306/database", (config, timeout) -> {
            given.putAll(config.getDataSourceProperties());
            return new MariaDbDataSource();
        }, e -> false)) {
            assertThat(given).containsEntry("keyStorePassword", "ks-s3cret");
            assertThat(pool.getDataSourceProperties().toString()).doesNotContain("s3cret");
        }
    }

    @Test
    @DisplayName("bad credentials fail as a permanent error, without the password")
    void badCredentialsArePermanent() {
        Throwable failure = catchThrowable(() -> DedupStores.open("mysql://nobody-" + UUID.randomUUID()
                .toString().substring(0, 8) + ":wr0ng-s3cret@" + MariaDbTestSupport.address().getAuthority()
                + MariaDbTestSupport.address().getPath() + "?timeout=2s&namespace=n"));
        assertThat(failure).isInstanceOf(DedupStoreException.class);
        assertThat(((DedupStoreException) failure).isRetryable()).isFalse();
        NoSecrets.assertNoSecret(failure, "s3cret");
    }
}
