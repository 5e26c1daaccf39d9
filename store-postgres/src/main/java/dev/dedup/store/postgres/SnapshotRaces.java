package dev.dedup.store.postgres;

import dev.dedup.DedupStoreException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * A claim statement that returned no row for a key met a row committed after its snapshot (the insert conflicted
 * with it, the snapshot could not see it). A rerun takes a new snapshot and sees it; on a hot key it may meet the
 * next commit, so the claim reruns until it decides or the store's timeout passes, never after a fixed count.
 */
final class SnapshotRaces {
    /** Reruns at once this many times; after that, 1 ms apart, so that a churning key is not hammered. */
    private static final int IMMEDIATE_RERUNS = 5;

    private final String namespace;
    private final Duration timeout;
    private final long deadline;
    private int reruns;

    SnapshotRaces(String namespace, Duration timeout) {
        this.namespace = namespace;
        this.timeout = timeout;
        this.deadline = System.nanoTime() + timeout.toNanos();
    }

    /** Returns when the statement should run again; throws when it cannot settle. */
    void beforeRerun(Connection connection) throws SQLException {
        reruns++;
        if (reruns == 1 && connection.getTransactionIsolation() > Connection.TRANSACTION_READ_COMMITTED) {
            // One snapshot for the whole transaction: a rerun would never see the row either.
            throw new DedupStoreException("PostgreSQL dedup store claim in namespace '" + namespace + "' met a row"
                    + " committed after its transaction's snapshot, which REPEATABLE READ and SERIALIZABLE cannot see;"
                    + " retry the whole transaction, or claim under READ COMMITTED", null, true);
        }
        if (System.nanoTime() - deadline > 0) {
            throw new DedupStoreException("PostgreSQL dedup store claim in namespace '" + namespace + "' did not"
                    + " settle within " + timeout + ": the key was committed by others after each of " + reruns
                    + " snapshots", null, true);
        }
        if (reruns > IMMEDIATE_RERUNS) {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DedupStoreException("PostgreSQL dedup store claim in namespace '" + namespace
                        + "' was interrupted while its key was contended", e, true);
            }
        }
    }
}
