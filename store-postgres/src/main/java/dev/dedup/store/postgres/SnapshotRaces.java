package dev.dedup.store.postgres;

import dev.dedup.DedupStoreException;
import dev.dedup.spi.ContentionRetry;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * A claim statement that returned no row for a key met a row committed after its snapshot (the insert conflicted
 * with it, the snapshot could not see it). A rerun takes a new snapshot and sees it; on a hot key it may meet the
 * next commit, so the claim reruns until it decides or the store's timeout passes, paced by {@link ContentionRetry}
 * like every store's contended claims.
 */
final class SnapshotRaces {
    private final String namespace;
    private final ContentionRetry retry;

    SnapshotRaces(String namespace, Duration timeout) {
        this.namespace = namespace;
        this.retry = ContentionRetry.within(timeout);
    }

    /** Returns when the statement should run again; throws when it cannot settle. */
    void beforeRerun(Connection connection) throws SQLException {
        if (retry.attempts() == 1 && connection.getTransactionIsolation() > Connection.TRANSACTION_READ_COMMITTED) {
            // One snapshot for the whole transaction: a rerun would never see the row either.
            throw new DedupStoreException("PostgreSQL dedup store claim in namespace '" + namespace + "' met a row"
                    + " committed after its transaction's snapshot, which REPEATABLE READ and SERIALIZABLE cannot see;"
                    + " retry the whole transaction, or claim under READ COMMITTED", null, true);
        }
        retry.pauseOrGiveUp("PostgreSQL dedup store (namespace '" + namespace + "')", "claim");
    }
}
