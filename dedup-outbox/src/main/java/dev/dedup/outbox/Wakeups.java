package dev.dedup.outbox;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay's idle wait: with LISTEN/NOTIFY, returns as soon as a commit with appends notifies the outbox's channel;
 * otherwise, or while the listening connection is broken, a plain sleep. Used by the relay's thread only.
 */
final class Wakeups implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Wakeups.class);
    private static final long SLICE_MILLIS = 200;

    private final DataSource dataSource;
    private final String channel;
    private Connection listening;

    /** {@code channel} null: no LISTEN, only sleeps. */
    Wakeups(DataSource dataSource, String channel) {
        this.dataSource = dataSource;
        this.channel = channel;
    }

    /**
     * Waits up to {@code pause}, or until notified.
     *
     * @return false when interrupted
     */
    boolean await(Duration pause) {
        PGConnection listener = channel == null ? null : listener();
        try {
            if (listener == null) {
                Thread.sleep(pause.toMillis());
                return true;
            }
            // In slices: the driver's wait ignores interrupts, and close() must not wait out a long poll interval.
            long deadline = System.nanoTime() + pause.toNanos();
            while (!Thread.currentThread().isInterrupted()) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    return true;
                }
                PGNotification[] received = listener.getNotifications((int) Math.min(left, SLICE_MILLIS));
                if (received != null && received.length > 0) {
                    return true;
                }
            }
            return false;
        } catch (InterruptedException e) {
            return false;
        } catch (SQLException e) {
            log.warn("outbox relay: lost its LISTEN connection ({}); polling until it is back", e.toString());
            close();
            return sleep(pause);
        }
    }

    private static boolean sleep(Duration pause) {
        try {
            Thread.sleep(pause.toMillis());
            return true;
        } catch (InterruptedException e) {
            return false;
        }
    }

    /** The listening connection, opened (auto-commit, so LISTEN takes effect at once) when there is none. */
    private PGConnection listener() {
        try {
            if (listening == null) {
                Connection connection = dataSource.getConnection();
                connection.setAutoCommit(true);
                try (Statement listen = connection.createStatement()) {
                    listen.execute("LISTEN \"" + channel + "\"");
                }
                listening = connection;
            }
            return listening.unwrap(PGConnection.class);
        } catch (SQLException e) {
            close();
            return null;        // the next poll fails and backs off, or works and we listen again next time
        }
    }

    @Override
    public void close() {
        if (listening != null) {
            try {
                listening.close();
            } catch (SQLException e) {
                // broken already
            }
            listening = null;
        }
    }
}
