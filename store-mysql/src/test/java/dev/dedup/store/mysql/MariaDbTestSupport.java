package dev.dedup.store.mysql;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.tck.TestServers;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * The real MariaDB the tests run against (the harness's, or a container where Docker runs), and pools on it. Only
 * MariaDB runs here: the test names say so, and no MySQL 8 server is claimed.
 */
final class MariaDbTestSupport {
    static final String SERVER = "MariaDB 10.11";
    static final String VARIABLE = "DEDUP_TEST_MARIADB_URL";

    private static String url;

    private MariaDbTestSupport() {}

    /** A JDBC URL with credentials and a query ({@code jdbc:mariadb://host:port/db?user=...}). */
    static synchronized String jdbcUrl() {
        if (url == null) {
            url = TestServers.require(SERVER, VARIABLE, MariaDbTestSupport::startContainer);
        }
        return url;
    }

    /** The server's address, for a proxy in front of it. */
    static URI address() {
        return URI.create(jdbcUrl().substring("jdbc:".length()));
    }

    /** {@code host:port/database?query} of the server, for URIs of other schemes. */
    static String hostAndDatabase() {
        return jdbcUrl().substring("jdbc:mariadb://".length());
    }

    /** A pool whose connections use {@code isolation}, such as {@code TRANSACTION_READ_COMMITTED}. */
    static HikariDataSource pool(String isolation, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(5_000);
        config.setInitializationFailTimeout(-1);
        config.setTransactionIsolation(isolation);
        return new HikariDataSource(config);
    }

    static void execute(String sql) throws SQLException {
        try (Connection connection = DriverManager.getConnection(jdbcUrl());
                Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    /** Where Docker runs: mariadb:10.11, root without a password, database dedup. */
    private static String startContainer() {
        GenericContainer<?> container = new GenericContainer<>("mariadb:10.11")
                .withEnv("MARIADB_ALLOW_EMPTY_ROOT_PASSWORD", "1")
                .withEnv("MARIADB_DATABASE", "dedup")
                .withCommand("--event-scheduler=ON")
                .withExposedPorts(3306)
                .waitingFor(Wait.forLogMessage(".*ready for connections.*", 2));
        container.start();
        return "jdbc:mariadb://" + container.getHost() + ":" + container.getMappedPort(3306) + "/dedup?user=root";
    }
}
