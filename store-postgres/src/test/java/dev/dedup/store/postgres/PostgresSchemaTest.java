package dev.dedup.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.Duplicate;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Schema creation, validation, the pg_cron purge job and the purge itself, on the real server. */
class PostgresSchemaTest {
    private static HikariDataSource pool;

    @BeforeAll
    static void connect() {
        pool = PostgresTestSupport.pool(4);
    }

    @AfterAll
    static void disconnect() {
        pool.close();
    }

    private static String freshTable() {
        return "schema_test_" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    @DisplayName("createSchema makes the table and registers one pg_cron job that calls the batched purge")
    void createsTableAndCronJob() throws SQLException {
        String table = freshTable();
        PostgresDedupStore store = PostgresDedupStore.builder(pool).table(table).validateSchema(false).build();

        PostgresSchemaReport first = store.createSchema();
        PostgresSchemaReport second = store.createSchema();

        assertThat(first.cronScheduled()).isTrue();
        assertThat(first.cronProblem()).isEmpty();
        assertThat(first.cronJobName()).isEqualTo("dedup-purge:dedup." + table);
        assertThat(second).isEqualTo(first);
        List<List<String>> jobs = rows("SELECT schedule, command, database FROM cron.job WHERE jobname = '"
                + first.cronJobName() + "'");
        assertThat(jobs).containsExactly(List.of("* * * * *", "CALL \"" + table + "_purge\"(5000, 100)", "dedup"));
        store.validateSchema();
        assertThat(store.claim("k", Duration.ofSeconds(5))).isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("the purge deletes expired rows only, through the method and through the job's procedure")
    void purgeDeletesOnlyExpiredRows() throws Exception {
        String table = freshTable();
        PostgresDedupStore store = PostgresDedupStore.builder(pool).table(table).validateSchema(false).build();
        PostgresSchemaReport report = store.createSchema();
        for (int i = 0; i < 30; i++) {
            store.claim("expiring-" + i, Duration.ofMillis(50));
            store.claim("live-" + i, Duration.ofMinutes(5));
        }
        Claim completed = (Claim) store.claim("completed", Duration.ofMinutes(5));
        store.complete(completed, Duration.ofMinutes(5), new byte[] {1});
        Thread.sleep(150);

        assertThat(store.purgeExpired(10)).isEqualTo(10);
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(report.purgeCommand());
        }

        assertThat(rows("SELECT count(*) FROM \"" + table + "\" WHERE key LIKE 'expiring-%'")).containsExactly(List.of("0"));
        assertThat(rows("SELECT count(*) FROM \"" + table + "\"")).containsExactly(List.of("31"));
        assertThat(store.purgeExpired(10)).isZero();
    }

    @Test
    @DisplayName("under sustained claims with a short retention, purging keeps the table bounded")
    void tableStaysBoundedUnderSustainedClaims() throws Exception {
        String table = freshTable();
        PostgresDedupStore store = PostgresDedupStore.builder(pool).table(table).validateSchema(false).build();
        store.createSchema();
        List<Integer> sizes = new ArrayList<>();
        for (int round = 0; round < 10; round++) {
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                keys.add("round-" + round + "-" + i);
            }
            for (var result : store.claimAll(keys, Duration.ofSeconds(30))) {
                store.complete((Claim) result, Duration.ofMillis(100), null);
            }
            Thread.sleep(120);
            store.purgeExpired(10_000);
            sizes.add(Integer.parseInt(rows("SELECT count(*) FROM \"" + table + "\"").get(0).get(0)));
        }

        // 2,000 keys were claimed and completed; after each purge only the last round's could still be live.
        assertThat(sizes).allSatisfy(size -> assertThat(size).isLessThanOrEqualTo(200));
    }

    @Test
    @DisplayName("a fresh database takes one line: the builder's createSchema(true) builds a working store")
    void builderCreatesTheSchemaOnAFreshDatabase() throws SQLException {
        String table = freshTable();

        PostgresDedupStore store = PostgresDedupStore.builder(pool).table(table).createSchema(true).build();

        assertThat(store.claim("k", Duration.ofSeconds(5))).isInstanceOf(Claim.class);
        assertThat(rows("SELECT count(*) FROM cron.job WHERE jobname = 'dedup-purge:dedup." + table + "'"))
                .containsExactly(List.of("1"));
        assertThat(PostgresDedupStore.builder(pool).table(table).createSchema(true).build().claim("k",
                Duration.ofSeconds(5))).as("a second start on the same table").isInstanceOf(Duplicate.class);
    }

    @Test
    @DisplayName("replicas starting together: eight createSchema(true) at once on a fresh table all succeed, one job")
    void concurrentCreateSchema() throws Exception {
        String table = freshTable();
        int replicas = 8;
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(replicas);
        List<java.util.concurrent.Future<PostgresSchemaReport>> reports = new ArrayList<>();
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(replicas);
        // Each replica on a pool of its own, as separate processes would be.
        List<HikariDataSource> pools = new ArrayList<>();
        try {
            for (int i = 0; i < replicas; i++) {
                HikariDataSource own = PostgresTestSupport.pool(1);
                pools.add(own);
                reports.add(threads.submit(() -> {
                    PostgresDedupStore store = PostgresDedupStore.builder(own).table(table).validateSchema(false)
                            .build();
                    start.await();
                    return store.createSchema();
                }));
            }
            for (java.util.concurrent.Future<PostgresSchemaReport> report : reports) {
                assertThat(report.get(60, java.util.concurrent.TimeUnit.SECONDS).cronScheduled()).isTrue();
            }
        } finally {
            threads.shutdownNow();
            pools.forEach(HikariDataSource::close);
        }
        assertThat(rows("SELECT count(*) FROM cron.job WHERE jobname = 'dedup-purge:dedup." + table + "'"))
                .containsExactly(List.of("1"));
        PostgresDedupStore.builder(pool).table(table).build().dropSchema();
    }

    @Test
    @DisplayName("dropSchema removes the table, the purge procedure and the pg_cron job, and may run twice")
    void dropSchemaRemovesEverything() throws SQLException {
        String table = freshTable();
        PostgresDedupStore store = PostgresDedupStore.builder(pool).table(table).createSchema(true).build();

        store.dropSchema();
        store.dropSchema();

        assertThat(rows("SELECT count(*) FROM cron.job WHERE jobname = 'dedup-purge:dedup." + table + "'"))
                .containsExactly(List.of("0"));
        assertThat(rows("SELECT count(*) FROM pg_proc WHERE proname = '" + table + "_purge'"))
                .containsExactly(List.of("0"));
        assertThat(rows("SELECT to_regclass('\"" + table + "\"') IS NULL")).containsExactly(List.of("t"));
        assertThatThrownBy(() -> PostgresDedupStore.builder(pool).table(table).build())
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("createSchema(true)");
    }

    @Test
    @DisplayName("a missing table or a wrong column fails at start-up with the DDL that fixes it")
    void validationNamesTheFix() throws SQLException {
        String missing = freshTable();
        assertThatThrownBy(() -> PostgresDedupStore.builder(pool).table(missing).build())
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("does not exist")
                .hasMessageContaining("CREATE TABLE IF NOT EXISTS \"" + missing + "\"");

        String wrong = freshTable();
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE \"" + wrong + "\" (namespace text, key text, owner text, state text,"
                    + " expires_at timestamp, result bytea, created_at timestamptz)");
        }
        assertThatThrownBy(() -> PostgresDedupStore.builder(pool).table(wrong).build())
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("expires_at: expected timestamp with time zone, found timestamp without time zone")
                .hasMessageContaining("completed_at: expected timestamp with time zone, found no such column");
    }

    @Test
    @DisplayName("a table name that is not a plain identifier is rejected before any SQL runs")
    void rejectsInjection() {
        for (String bad : List.of("claims; DROP TABLE dedup_claims", "a.b.c", "1claims", "\"quoted\"", "", "x".repeat(49))) {
            assertThatThrownBy(() -> PostgresDedupStore.builder(pool).table(bad))
                    .isInstanceOf(DedupConfigurationException.class)
                    .hasMessageContaining("identifier");
        }
        assertThatThrownBy(() -> DedupStores.open(PostgresTestSupport.jdbcUrl() + "&table=x;drop"))
                .isInstanceOf(DedupConfigurationException.class);
    }

    @Test
    @DisplayName("a schema-qualified table works, in a schema of its own")
    void schemaQualifiedTable() throws SQLException {
        String schema = "s_" + UUID.randomUUID().toString().substring(0, 8);
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE SCHEMA " + schema);
        }
        PostgresDedupStore store = PostgresDedupStore.builder(pool).table(schema + ".claims").validateSchema(false).build();

        assertThat(store.createSchema().cronScheduled()).isTrue();
        store.validateSchema();
        assertThat(store.claim("k", Duration.ofSeconds(5))).isInstanceOf(Claim.class);
        assertThat(rows("SELECT count(*) FROM " + schema + ".claims")).containsExactly(List.of("1"));
    }

    @Test
    @DisplayName("validation finds the table where the statements do: in a later schema of the search_path")
    void validationFollowsTheSearchPath() throws SQLException {
        String first = "sp_first_" + UUID.randomUUID().toString().substring(0, 8);
        String second = "sp_second_" + UUID.randomUUID().toString().substring(0, 8);
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE SCHEMA " + first);
            statement.execute("CREATE SCHEMA " + second);
        }
        PostgresDedupStore.builder(pool).table(second + ".claims").validateSchema(false).build().createSchema();

        // current_schema() is the empty first schema; unqualified names resolve to the second, as for any statement.
        try (HikariDataSource searchPath = PostgresTestSupport.pool(
                PostgresTestSupport.jdbcUrl() + "&currentSchema=" + first + "," + second, 2)) {
            PostgresDedupStore store = PostgresDedupStore.builder(searchPath).table("claims").build();
            assertThat(store.claim("k", Duration.ofSeconds(5))).isInstanceOf(Claim.class);
        }
        assertThat(rows("SELECT count(*) FROM " + second + ".claims")).containsExactly(List.of("1"));
    }

    @Test
    @DisplayName("a table made before FAILED existed: validation says how to fix it, createSchema upgrades it")
    void upgradesAStateCheckWithoutFailed() throws SQLException {
        String table = freshTable();
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE \"" + table + "\" (namespace text NOT NULL, key text NOT NULL,"
                    + " owner text NOT NULL, state text NOT NULL CHECK (state IN ('IN_PROGRESS', 'COMPLETED')),"
                    + " expires_at timestamptz NOT NULL, result bytea, created_at timestamptz NOT NULL,"
                    + " completed_at timestamptz, PRIMARY KEY (namespace, key))");
        }
        assertThatThrownBy(() -> PostgresDedupStore.builder(pool).table(table).build())
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("FAILED")
                .hasMessageContaining("createSchema()");

        PostgresDedupStore store = PostgresDedupStore.builder(pool).table(table).validateSchema(false).build();
        store.createSchema();
        store.validateSchema();
        Claim claim = (Claim) store.claim("declined", Duration.ofSeconds(5));
        assertThat(store.fail(claim, Duration.ofMinutes(5), "no funds".getBytes())).isTrue();
        assertThat(rows("SELECT state FROM \"" + table + "\"")).containsExactly(List.of("FAILED"));
    }

    @Test
    @DisplayName("a table made before fingerprints: validation says how to fix it, createSchema adds the column")
    void addsTheFingerprintColumnToAnOlderTable() throws SQLException {
        String table = freshTable();
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE \"" + table + "\" (namespace text NOT NULL, key text NOT NULL,"
                    + " owner text NOT NULL,"
                    + " state text NOT NULL CHECK (state IN ('IN_PROGRESS', 'COMPLETED', 'FAILED')),"
                    + " expires_at timestamptz NOT NULL, result bytea, created_at timestamptz NOT NULL,"
                    + " completed_at timestamptz, PRIMARY KEY (namespace, key))");
            statement.execute("INSERT INTO \"" + table + "\" VALUES ('default', 'old', 'someone', 'COMPLETED',"
                    + " now() + interval '1 hour', NULL, now(), now())");
        }
        assertThatThrownBy(() -> PostgresDedupStore.builder(pool).table(table).build())
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("no fingerprint column")
                .hasMessageContaining("createSchema()")
                .hasMessageContaining("ALTER TABLE \"" + table + "\" ADD COLUMN IF NOT EXISTS fingerprint bytea;")
                .hasMessageNotContaining("'FAILED'");

        PostgresDedupStore store = PostgresDedupStore.builder(pool).table(table).validateSchema(false).build();
        store.createSchema();
        store.createSchema();
        store.validateSchema();
        byte[] fingerprint = {1, 2, 3};
        assertThat(store.claim("new", Duration.ofSeconds(5), fingerprint)).isInstanceOf(Claim.class);
        Duplicate duplicate = (Duplicate) store.claim("new", Duration.ofSeconds(5));
        assertThat(duplicate.fingerprint()).hasValueSatisfying(stored -> assertThat(stored).isEqualTo(fingerprint));
        Duplicate old = (Duplicate) store.claim("old", Duration.ofSeconds(5), fingerprint);
        assertThat(old.fingerprint()).as("a row from before the upgrade has no fingerprint").isEmpty();
        assertThat(rows("SELECT key, fingerprint IS NULL FROM \"" + table + "\" ORDER BY key"))
                .containsExactly(List.of("new", "f"), List.of("old", "t"));
    }

    @Test
    @DisplayName("where pg_cron lives in another database, the report says so, and a cron DataSource schedules it there")
    void cronInAnotherDatabase() throws SQLException {
        String other = PostgresTestSupport.jdbcUrl().replace("/dedup?", "/dedup_other?");
        try {
            PostgresTestSupport.execute(PostgresTestSupport.jdbcUrl(), "CREATE DATABASE dedup_other");
        } catch (SQLException alreadyThere) {
            // 42P04 duplicate_database: made by an earlier run
        }
        String table = freshTable();
        try (HikariDataSource otherPool = PostgresTestSupport.pool(other, 2)) {
            PostgresDedupStore store = PostgresDedupStore.builder(otherPool).table(table).validateSchema(false).build();

            PostgresSchemaReport withoutCron = store.createSchema();
            assertThat(withoutCron.cronScheduled()).isFalse();
            assertThat(withoutCron.cronProblem()).hasValueSatisfying(problem -> assertThat(problem)
                    .contains("pg_cron lives in database dedup, not dedup_other")
                    .contains("createSchema(cronDatabase)"));
            assertThat(store.claim("still-works", Duration.ofSeconds(5))).isInstanceOf(Claim.class);

            PostgresSchemaReport withCron = store.createSchema(pool);
            assertThat(withCron.cronScheduled()).isTrue();
            assertThat(rows("SELECT database, command FROM cron.job WHERE jobname = '" + withCron.cronJobName() + "'"))
                    .containsExactly(List.of("dedup_other", withCron.purgeCommand()));
        }
    }

    @Test
    @DisplayName("postgresql:// URIs open a store; createSchema=true creates the table")
    void opensByUri() {
        String table = freshTable();
        String uri = PostgresTestSupport.postgresqlUri() + "?table=" + table + "&namespace=uri&createSchema=true";
        try (DedupStore store = DedupStores.open(uri)) {
            assertThat(store.namespace()).isEqualTo("uri");
            assertThat(store.claim("k", Duration.ofSeconds(5))).isInstanceOf(Claim.class);
        }
        assertThatThrownBy(() -> DedupStores.open(PostgresTestSupport.postgresqlUri() + "?poolSize=0"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("poolSize=0");
    }

    private static List<List<String>> rows(String sql) throws SQLException {
        List<List<String>> rows = new ArrayList<>();
        try (Connection connection = pool.getConnection();
                PreparedStatement statement = connection.prepareStatement(sql);
                ResultSet result = statement.executeQuery()) {
            int columns = result.getMetaData().getColumnCount();
            while (result.next()) {
                List<String> row = new ArrayList<>();
                for (int i = 1; i <= columns; i++) {
                    row.add(result.getString(i));
                }
                rows.add(row);
            }
        }
        return rows;
    }
}
