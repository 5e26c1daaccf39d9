package dev.dedup.outbox;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes an {@link Outbox}'s committed events: in a transaction, takes the oldest unpublished batch with
 * {@code FOR UPDATE SKIP LOCKED}, hands it to the {@link OutboxPublisher}, marks the events the broker confirmed as
 * published, and commits. Several relays (threads or processes) share one table without publishing an event
 * concurrently: each holds its batch's row locks until its commit.
 *
 * <p><b>At least once, by design.</b> A relay that dies after the broker confirmed a batch but before its commit
 * leaves the batch unpublished in the table: the next relay publishes it again, under the same {@code message-id},
 * and consumers deduplicate it.
 *
 * <p><b>Order.</b> Events with the same key are published in id (append) order, within one relay and across relays:
 * a relay publishes a keyed event only when, in a snapshot taken after it locked its batch, every earlier event of
 * that key is published (or in its own batch, before it). On PostgreSQL, a key's transaction-scoped advisory lock
 * keeps the relays off each other's keys meanwhile, so they rarely take events they must put back; MySQL has no such
 * lock, and relays contending for a key put more back. On MySQL and MariaDB the relay's transaction runs at READ
 * COMMITTED, whatever the pool's level, so that it takes no gap locks that would hold appends up. After a failed or
 * repeated publish, a key's earlier event can arrive again after its later ones; the first copies arrive in order.
 *
 * <p><b>Poison events.</b> An event the broker rejects for a reason of its own (see
 * {@link OutboxPublishException#rejected()}) counts an attempt; at {@link Builder#maxAttempts} it is parked: left out
 * of every batch and of the order check, so the later events of its key go out without it. Parking gives up that
 * key's order, by design; {@link Outbox#replayParked()} puts parked events back once their cause is fixed. An outage
 * counts no attempt.
 *
 * <pre>{@code
 * OutboxRelay relay = OutboxRelay.builder(outbox, publisher).batchSize(100).pollInterval(Duration.ofMillis(100))
 *         .build();
 * relay.start();   // a thread of its own; relay.close() stops it
 * }</pre>
 */
public final class OutboxRelay implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(OutboxRelay.class);

    private final Outbox outbox;
    private final OutboxPublisher publisher;
    private final DataSource dataSource;
    private final int batchSize;
    private final int maxAttempts;
    private final Duration pollInterval;
    private final Duration maxBackoff;
    private final AtomicLong published = new AtomicLong();
    private final AtomicLong publishErrors = new AtomicLong();
    private final AtomicLong parked = new AtomicLong();
    private final Object lifecycle = new Object();
    private Thread thread;
    private volatile boolean running;

    private OutboxRelay(Builder builder) {
        this.outbox = builder.outbox;
        this.publisher = builder.publisher;
        this.dataSource = outbox.dataSource();
        this.batchSize = builder.batchSize;
        this.maxAttempts = builder.maxAttempts;
        this.pollInterval = builder.pollInterval;
        this.maxBackoff = builder.maxBackoff;
    }

    /**
     * Starts a relay for {@code outbox}'s table.
     *
     * @param outbox the outbox whose events to publish
     * @param publisher publishes to the broker and waits for its confirmation
     * @return a builder with batch size 100, poll interval 100 ms, back-off up to 30 s and 5 attempts per event
     */
    public static Builder builder(Outbox outbox, OutboxPublisher publisher) {
        return new Builder(outbox, publisher);
    }

    /**
     * Starts relaying on a thread of its own, until {@link #close()}. An empty poll waits the poll interval (or
     * until a commit notifies, when the outbox {@linkplain Outbox#notifiesRelays() notifies relays}); a full batch
     * polls again at once; a failure is logged and waits twice as long as the previous one, up to the maximum
     * back-off.
     *
     * @throws IllegalStateException when the relay was started before
     */
    public void start() {
        synchronized (lifecycle) {
            if (thread != null) {
                throw new IllegalStateException("relay for outbox " + outbox.table() + " was already started");
            }
            running = true;
            thread = new Thread(this::loop, "dedup-outbox-relay-" + outbox.table());
            thread.setDaemon(true);
            thread.start();
        }
    }

    /**
     * Stops relaying: the batch in flight is finished (published and marked, or left for later), then the thread
     * ends. Waits up to 30 s for it.
     */
    @Override
    public void close() {
        Thread running;
        synchronized (lifecycle) {
            this.running = false;
            running = thread;
        }
        if (running == null) {
            return;
        }
        running.interrupt();
        try {
            running.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void loop() {
        try (Wakeups wakeups = new Wakeups(dataSource, outbox.notifiesRelays()
                ? PostgresOutboxDialect.channel(outbox.tableName()) : null)) {
            relayUntilClosed(wakeups);
        }
    }

    private void relayUntilClosed(Wakeups wakeups) {
        Duration backoff = Duration.ZERO;
        while (running) {
            boolean waited;
            try {
                int relayed = relayOnce();
                backoff = Duration.ZERO;
                // Idle: wait for the poll interval, or less when a commit notifies.
                waited = relayed == batchSize || wakeups.await(pollInterval);
            } catch (RuntimeException e) {
                backoff = backoff.isZero() ? pollInterval : min(backoff.multipliedBy(2), maxBackoff);
                // The message names the table and the failure, never a connection's credentials.
                log.warn("outbox relay for {}: {}; retrying in {} ms", outbox.table(), e.toString(),
                        backoff.toMillis());
                waited = sleep(backoff);     // not cut short by notifications: the failure must have time to pass
            }
            if (!waited) {
                return;
            }
        }
    }

    private boolean sleep(Duration pause) {
        try {
            Thread.sleep(pause.toMillis());
            return true;
        } catch (InterruptedException e) {
            return false;       // close() interrupts: stop
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    /**
     * One cycle, on the calling thread: takes a batch, publishes it, marks the confirmed events and commits. For
     * tests and for applications that schedule the relay themselves.
     *
     * @return how many events were published and marked: 0 when none was waiting (or all were held by others)
     * @throws OutboxPublishException when the publisher did not get every event confirmed; the confirmed ones are
     *     marked all the same, and each {@linkplain OutboxPublishException#rejected() rejected} one counts an attempt
     *     (parked at {@link Builder#maxAttempts}) in the same transaction
     * @throws dev.dedup.DedupStoreException when the database fails; nothing of the batch is marked then
     */
    public int relayOnce() {
        try (Connection connection = dataSource.getConnection()) {
            OutboxDialect dialect = outbox.dialect(connection);
            connection.setAutoCommit(false);
            dialect.beginTransaction(connection);
            try {
                int marked = publishBatch(connection, dialect);
                connection.commit();
                return marked;
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly(connection);
                throw e;
            }
        } catch (SQLException e) {
            throw outbox.failure("relay", e);
        }
    }

    private int publishBatch(Connection connection, OutboxDialect dialect) throws SQLException {
        List<OutboxEvent> batch = inKeyOrder(connection, dialect, nextBatch(connection, dialect));
        if (batch.isEmpty()) {
            return 0;
        }
        OutboxPublishException failure = null;
        Set<String> confirmed;
        try {
            publisher.publish(List.copyOf(batch));
            confirmed = null;       // all of them
        } catch (OutboxPublishException e) {
            failure = e;
            confirmed = e.confirmed();
        } catch (RuntimeException e) {
            failure = new OutboxPublishException("publisher failed: " + e, Set.of(), e);
            confirmed = Set.of();
        }
        List<Long> ids = new ArrayList<>();
        for (OutboxEvent event : batch) {
            if (confirmed == null || confirmed.contains(event.messageId())) {
                ids.add(event.id());
            }
        }
        if (!ids.isEmpty()) {
            try (PreparedStatement mark = connection.prepareStatement(dialect.markPublished(ids.size()))) {
                dialect.bindAll(mark, 1, "bigint", ids);
                mark.executeUpdate();
            }
        }
        if (failure != null) {
            recordRejections(connection, dialect, batch, failure.rejected());
            // Commit what was confirmed, then report the rest; the caller's rollback is a no-op after the commit.
            connection.commit();
            published.addAndGet(ids.size());
            publishErrors.incrementAndGet();
            throw failure;
        }
        published.addAndGet(ids.size());
        return ids.size();
    }

    /** Counts an attempt for each rejected event of the batch, and parks those at the limit. */
    private void recordRejections(Connection connection, OutboxDialect dialect, List<OutboxEvent> batch,
            Map<String, String> rejected) throws SQLException {
        List<Long> ids = new ArrayList<>();
        List<String> errors = new ArrayList<>();
        Map<Long, OutboxEvent> byId = new HashMap<>();
        for (OutboxEvent event : batch) {
            String error = rejected.get(event.messageId());
            if (error != null) {
                ids.add(event.id());
                errors.add(error);
                byId.put(event.id(), event);
            }
        }
        if (ids.isEmpty()) {
            return;
        }
        for (long id : dialect.recordRejections(connection, maxAttempts, ids, errors)) {
            OutboxEvent event = byId.get(id);
            parked.incrementAndGet();
            log.error("outbox relay for {}: parked {} after {} attempts, the broker rejecting it: {}. Its key's later"
                    + " events go on without it; Outbox.replayParked() puts it back", outbox.table(), event,
                    maxAttempts, rejected.get(event.messageId()));
        }
    }

    private List<OutboxEvent> nextBatch(Connection connection, OutboxDialect dialect) throws SQLException {
        List<OutboxEvent> batch = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement(dialect.nextBatch())) {
            select.setInt(1, batchSize);
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    long micros = rows.getLong(7);
                    batch.add(new OutboxEvent(rows.getLong(1), rows.getString(2), rows.getString(3),
                            rows.getString(4), rows.getBytes(5), HeadersJson.read(rows.getString(6)),
                            Instant.EPOCH.plus(micros, ChronoUnit.MICROS)));
                }
            }
        }
        return batch;
    }

    /**
     * The batch without any keyed event that has an earlier event of its key still unpublished outside the batch:
     * that one is held by another relay, or was skipped by this scan, and must go first. The check reads a snapshot
     * taken after the batch was locked, so an earlier event another relay published and committed in the meantime
     * counts as published, and one it still holds counts as unpublished. Dropped events stay locked until the commit
     * and are taken by a later cycle.
     */
    private List<OutboxEvent> inKeyOrder(Connection connection, OutboxDialect dialect, List<OutboxEvent> batch)
            throws SQLException {
        Set<String> keys = new HashSet<>();
        for (OutboxEvent event : batch) {
            if (event.key() != null) {
                keys.add(event.key());
            }
        }
        if (keys.isEmpty()) {
            return batch;
        }
        Map<String, Deque<Long>> unpublished = new HashMap<>();
        try (PreparedStatement select = connection.prepareStatement(dialect.unpublishedOfKeys(keys.size()))) {
            int next = dialect.bindAll(select, 1, "text", List.copyOf(keys));
            select.setLong(next, batch.get(batch.size() - 1).id());
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    unpublished.computeIfAbsent(rows.getString(2), key -> new ArrayDeque<>()).add(rows.getLong(1));
                }
            }
        }
        List<OutboxEvent> inOrder = new ArrayList<>(batch.size());
        Set<String> blocked = new HashSet<>();
        for (OutboxEvent event : batch) {
            String key = event.key();
            if (key == null) {
                inOrder.add(event);
            } else if (!blocked.contains(key) && isNext(unpublished.get(key), event.id())) {
                unpublished.get(key).removeFirst();
                inOrder.add(event);
            } else {
                blocked.add(key);
            }
        }
        return inOrder;
    }

    private static boolean isNext(Deque<Long> unpublished, long id) {
        return unpublished != null && !unpublished.isEmpty() && unpublished.peekFirst() == id;
    }

    private static void rollbackQuietly(Connection connection) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            // The connection is broken: the server rolls the transaction back when it goes.
        }
    }

    /** {@return how many events this relay marked published since it was built} */
    public long publishedCount() {
        return published.get();
    }

    /** {@return how many batches the publisher failed to get fully confirmed since this relay was built} */
    public long publishErrors() {
        return publishErrors.get();
    }

    /** {@return how many events this relay parked since it was built (see {@link Builder#maxAttempts})} */
    public long parkedEvents() {
        return parked.get();
    }

    /** Builds an {@link OutboxRelay}. */
    public static final class Builder {
        private final Outbox outbox;
        private final OutboxPublisher publisher;
        private int batchSize = 100;
        private Duration pollInterval = Duration.ofMillis(100);
        private Duration maxBackoff = Duration.ofSeconds(30);
        private int maxAttempts = 5;

        private Builder(Outbox outbox, OutboxPublisher publisher) {
            this.outbox = Objects.requireNonNull(outbox, "outbox");
            this.publisher = Objects.requireNonNull(publisher, "publisher");
        }

        /**
         * The most events one cycle publishes (and holds locked until its commit).
         *
         * @param batchSize from 1 to 10,000; default 100
         * @return this builder
         */
        public Builder batchSize(int batchSize) {
            if (batchSize < 1 || batchSize > 10_000) {
                throw new IllegalArgumentException("batchSize must be from 1 to 10000, but was " + batchSize);
            }
            this.batchSize = batchSize;
            return this;
        }

        /**
         * How long the relay waits after a poll that found less than a full batch: the latency bound of an event.
         *
         * @param pollInterval from 1 ms to 1 minute; default 100 ms
         * @return this builder
         */
        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = within("pollInterval", pollInterval, Duration.ofMillis(1), Duration.ofMinutes(1));
            return this;
        }

        /**
         * The longest wait after repeated failures (the database or the broker away); waits double from the poll
         * interval up to it.
         *
         * @param maxBackoff from 1 ms to 10 minutes; default 30 s
         * @return this builder
         */
        public Builder maxBackoff(Duration maxBackoff) {
            this.maxBackoff = within("maxBackoff", maxBackoff, Duration.ofMillis(1), Duration.ofMinutes(10));
            return this;
        }

        /**
         * How many times the broker may reject an event for a reason of its own (too large, a missing topic or
         * exchange, unroutable, not authorised) before the relay parks it: leaves it out of every batch and of its
         * key's order, so the events after it go on. An outage counts no attempt. A parked event waits for
         * {@link Outbox#replayParked()}.
         *
         * @param maxAttempts from 1 to 1,000,000; default 5
         * @return this builder
         */
        public Builder maxAttempts(int maxAttempts) {
            if (maxAttempts < 1 || maxAttempts > 1_000_000) {
                throw new IllegalArgumentException("maxAttempts must be from 1 to 1000000, but was " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
            return this;
        }

        private static Duration within(String name, Duration value, Duration min, Duration max) {
            Objects.requireNonNull(value, name);
            if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
                throw new IllegalArgumentException(name + " must be from " + min + " to " + max + ", but was "
                        + value);
            }
            return value;
        }

        /**
         * Builds the relay; {@link OutboxRelay#start()} starts it.
         *
         * @return the relay
         */
        public OutboxRelay build() {
            return new OutboxRelay(this);
        }
    }
}
