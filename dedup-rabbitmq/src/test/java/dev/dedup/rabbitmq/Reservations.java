package dev.dedup.rabbitmq;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.store.postgres.PostgresDedupStore;
import dev.dedup.store.postgres.ReconnectingDataSource;
import dev.dedup.tck.TestServers;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The non-idempotent effect the crash tests count, in PostgreSQL: {@code reserve(sku, qty)} adds to a stock row and
 * writes one effect-log row per application, in one transaction. Tables are per run and dropped afterwards.
 */
final class Reservations implements AutoCloseable {
    static final int SKUS = 20;

    final HikariDataSource pool;
    private final ReconnectingDataSource connects;
    private final String stock;
    private final String effects;
    private final String claims;
    private PostgresDedupStore store;

    Reservations(String run) throws SQLException {
        String url = TestServers.require("PostgreSQL 15", "DEDUP_TEST_POSTGRES_URL", null);
        PGSimpleDataSource driver = new PGSimpleDataSource();
        driver.setUrl(url);
        driver.setConnectTimeout(2);
        driver.setSocketTimeout(5);
        // HikariCP backs off up to 5 s between failed connects, so after the outage run's stop its first connection
        // could come 5 s after the server's return; this retries every 100 ms instead (docs/postgresql.md).
        connects = new ReconnectingDataSource(driver);
        HikariConfig config = new HikariConfig();
        config.setDataSource(connects);
        config.setMaximumPoolSize(12);
        // Short, so that while PostgreSQL is down a claim or an effect fails within 2 s and the delivery is parked,
        // instead of every consumer thread waiting out the outage inside the pool.
        config.setConnectionTimeout(2_000);
        pool = new HikariDataSource(config);
        stock = run + "_stock";
        effects = run + "_effects";
        claims = run + "_claims";
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE " + stock + " (sku int PRIMARY KEY, reserved bigint NOT NULL)");
            statement.execute("CREATE TABLE " + effects + " (message_id text NOT NULL, consumer text NOT NULL,"
                    + " qty int NOT NULL,"
                    + " at timestamptz NOT NULL DEFAULT clock_timestamp())");
            statement.execute("INSERT INTO " + stock + " SELECT s, 0 FROM generate_series(0, " + (SKUS - 1) + ") s");
        }
    }

    /** The dedup store of this run, on its own claims table. */
    synchronized PostgresDedupStore store() {
        if (store == null) {
            store = PostgresDedupStore.builder(pool).table(claims).namespace("rabbit").createSchema(true).build();
        }
        return store;
    }

    /** The effect: one reservation and its log row, committed together. */
    void reserve(String messageId, String consumer, int sku, int quantity) throws SQLException {
        try (Connection connection = pool.getConnection()) {
            connection.setAutoCommit(false);
            try {
                reserveIn(connection, messageId, consumer, sku, quantity);
                connection.commit();
            } catch (SQLException | RuntimeException e) {
                connection.rollback();
                throw e;
            }
        }
    }

    /** The effect's two writes inside the caller's transaction, which commits them (the transactional inbox). */
    void reserveIn(Connection transaction, String messageId, String consumer, int sku, int quantity)
            throws SQLException {
        reserveIn(transaction, stock, effects, messageId, consumer, sku, quantity);
    }

    /**
     * The effect's two writes on run {@code run}'s tables, inside the caller's transaction: for a consumer process,
     * which attaches to the tables the test made.
     */
    static void reserveIn(Connection transaction, String run, String messageId, String consumer, String body)
            throws SQLException {
        String[] order = body.split(",");
        reserveIn(transaction, run + "_stock", run + "_effects", messageId, consumer, Integer.parseInt(order[0]),
                Integer.parseInt(order[1]));
    }

    /** The body of message {@code number}'s reserve order: {@code sku,quantity}. */
    static String order(int number) {
        return (number % SKUS) + "," + (1 + number % 5);
    }

    private static void reserveIn(Connection transaction, String stock, String effects, String messageId,
            String consumer, int sku, int quantity) throws SQLException {
        try (PreparedStatement add = transaction.prepareStatement(
                "UPDATE " + stock + " SET reserved = reserved + ? WHERE sku = ?");
                PreparedStatement log = transaction.prepareStatement(
                        "INSERT INTO " + effects + " (message_id, consumer, qty) VALUES (?, ?, ?)")) {
            add.setInt(1, quantity);
            add.setInt(2, sku);
            add.executeUpdate();
            log.setString(1, messageId);
            log.setString(2, consumer);
            log.setInt(3, quantity);
            log.executeUpdate();
        }
    }

    long effectRows() throws SQLException {
        return single("SELECT count(*) FROM " + effects);
    }

    long distinctMessages() throws SQLException {
        return single("SELECT count(DISTINCT message_id) FROM " + effects);
    }

    /** Applications beyond the first, summed over messages. */
    long doubled() throws SQLException {
        return effectRows() - distinctMessages();
    }

    /** The stock reserved by the first application of each message: what an exact consumer reserves. */
    long reservedOncePerMessage() throws SQLException {
        return single("SELECT coalesce(sum(q), 0) FROM (SELECT min(qty) q FROM " + effects + " GROUP BY message_id) m");
    }

    /** The stock the effect-log rows account for; equals {@link #totalReserved()} as the effect is atomic. */
    long loggedQuantity() throws SQLException {
        return single("SELECT coalesce(sum(qty), 0) FROM " + effects);
    }

    long totalReserved() throws SQLException {
        return single("SELECT sum(reserved) FROM " + stock);
    }

    private long single(String sql) throws SQLException {
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            return rows.getLong(1);
        }
    }

    @Override
    public void close() throws SQLException {
        try {
            if (store != null) {
                store.dropSchema();
                store.close();
            }
            try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
                statement.execute("DROP TABLE IF EXISTS " + stock);
                statement.execute("DROP TABLE IF EXISTS " + effects);
            }
        } finally {
            connects.close();
            pool.close();
        }
    }
}
