package dev.dedup.store.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.tck.TestServers;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;

/** The real PostgreSQL 15 + pg_cron the tests run against, and pools on it. */
final class PostgresTestSupport {
    static final String SERVER = "PostgreSQL 15 with pg_cron";
    static final String VARIABLE = "DEDUP_TEST_POSTGRES_URL";

    private static String url;

    private PostgresTestSupport() {}

    /** A JDBC URL with credentials, from the harness, or from a container where Docker runs. */
    static synchronized String jdbcUrl() {
        if (url == null) {
            url = TestServers.require(SERVER, VARIABLE, PostgresTestSupport::startContainer);
        }
        return url;
    }

    /** The same server in the {@code postgresql://user@host:port/db} form. */
    static String postgresqlUri() {
        String jdbc = jdbcUrl();
        String hostAndDb = jdbc.substring("jdbc:postgresql://".length(), jdbc.indexOf('?'));
        return "postgresql://postgres@" + hostAndDb;
    }

    static HikariDataSource pool(String jdbcUrl, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(5_000);
        config.setInitializationFailTimeout(-1);
        return new HikariDataSource(config);
    }

    static HikariDataSource pool(int size) {
        return pool(jdbcUrl(), size);
    }

    static void execute(String jdbcUrl, String sql) throws SQLException {
        try (Connection connection = DriverManager.getConnection(jdbcUrl); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    /** Where Docker runs: postgres:15 with the Debian pg_cron package, preloaded, in database dedup. */
    private static String startContainer() {
        GenericContainer<?> container = new GenericContainer<>(new ImageFromDockerfile("dedup/postgres-15-cron", false)
                .withDockerfileFromBuilder(image -> image.from("postgres:15")
                        .run("apt-get update && apt-get install -y --no-install-recommends postgresql-15-cron"
                                + " && rm -rf /var/lib/apt/lists/*")
                        .build()))
                .withEnv("POSTGRES_HOST_AUTH_METHOD", "trust")
                .withEnv("POSTGRES_DB", "dedup")
                .withCommand("postgres", "-c", "shared_preload_libraries=pg_cron", "-c", "cron.database_name=dedup",
                        "-c", "max_connections=200")
                .withExposedPorts(5432)
                .waitingFor(Wait.forLogMessage(".*database system is ready to accept connections.*", 2));
        container.start();
        String jdbc = "jdbc:postgresql://" + container.getHost() + ":" + container.getMappedPort(5432)
                + "/dedup?user=postgres";
        try {
            execute(jdbc, "CREATE EXTENSION IF NOT EXISTS pg_cron");
        } catch (SQLException e) {
            throw new IllegalStateException("could not create pg_cron in the container", e);
        }
        return jdbc;
    }
}
