package dev.dedup.benchmarks;

import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.benchmarks.fixture.BenchStore;
import dev.dedup.benchmarks.fixture.KafkaFixture;
import dev.dedup.benchmarks.fixture.StoreFixture;
import dev.dedup.kafka.KafkaRecordProcessor;
import dev.dedup.kafka.PollResult;
import dev.dedup.kafka.RecordKeys;
import dev.dedup.store.postgres.PostgresDedupStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A KafkaConsumer poll loop on the harness's real broker, with and without dedup. One operation is one poll of up to
 * {@value #MAX_POLL_RECORDS} records from {@link KafkaFixture#TOPIC} (one partition), every record handled by a
 * trivial handler (a counter), and the offset committed with {@code commitSync}. The primary score is polls/s; the
 * {@code records} secondary score ({@link Records}) is records/s, the figure the report and the docs show.
 *
 * <p>The {@code loop} parameter picks the loop:
 * <ul>
 *   <li>{@code no-dedup}: poll, handler per record, commitSync: the reference;
 *   <li>{@code adapter-redis}, {@code adapter-postgres}: {@link KafkaRecordProcessor#poll} on the store (one
 *       {@code claimAll} per partition batch, the handler and a {@code complete} per record, commitSync);
 *   <li>{@code batch-redis}, {@code batch-postgres}: the same with {@code settleInBatches()}: one {@code claimAll},
 *       the handlers, one {@code settleAll} per partition batch, commitSync;
 *   <li>{@code inbox-postgres}: the processor's inbox mode: per partition batch one transaction on a connection of
 *       the fixture's pool with the {@code claimAll}, the handlers (which only count, as everywhere here: no write
 *       of their own) and the {@code settleAll}, its commit, then commitSync;
 *   <li>{@code per-record-redis}, {@code per-record-postgres}: the same poll and commit, but
 *       {@link IdempotentConsumer#process} per record (one claim and one complete per record): what the adapter
 *       would cost without its batch claim.
 * </ul>
 *
 * <p>Keys are fresh in every trial and never run out: each trial claims in a namespace of its own, and when the
 * consumer reaches the end of the topic it seeks back to the start and appends a new generation number to every key
 * ({@code m-<offset>/<generation>}). Every outcome is checked: a record that is not {@code Processed} fails the run.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class KafkaBenchmark {
    /** The batch: up to 500 records per poll ({@code max.poll.records}). */
    public static final int MAX_POLL_RECORDS = 500;

    /** How long one operation may wait for a non-empty poll before the run fails (the topic never runs dry). */
    private static final Duration NON_EMPTY_WITHIN = Duration.ofSeconds(30);
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(500);

    @Param({"no-dedup", "batch-redis", "adapter-redis", "per-record-redis", "batch-postgres", "inbox-postgres",
        "adapter-postgres", "per-record-postgres"})
    public String loop;

    private Loop kind;
    private String group;
    private TopicPartition partition;
    private KafkaConsumer<String, String> consumer;
    private StoreFixture fixture;
    private String namespace;
    private DedupStore store;
    private KafkaRecordProcessor<String, String, Void> processor;
    private IdempotentConsumer<ConsumerRecord<String, String>, Void> perRecord;
    /** Bumped each time the consumer goes back to the topic's start, so every key is claimed for the first time. */
    private long generation;
    /** What the handler does: count. */
    private long handled;

    /** The kinds of loop. */
    enum Loop { NO_DEDUP, ADAPTER, BATCH, INBOX, PER_RECORD }

    /** The records counter, reported by JMH as the {@code records} score in records/s. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Records {
        public long records;

        @Setup(Level.Iteration)
        public void reset() {
            records = 0;
        }
    }

    @Setup(Level.Trial)
    public void open() {
        String storeName;
        if (loop.equals("no-dedup")) {
            kind = Loop.NO_DEDUP;
            storeName = null;
        } else if (loop.startsWith("adapter-")) {
            kind = Loop.ADAPTER;
            storeName = loop.substring("adapter-".length());
        } else if (loop.startsWith("batch-")) {
            kind = Loop.BATCH;
            storeName = loop.substring("batch-".length());
        } else if (loop.equals("inbox-postgres")) {
            kind = Loop.INBOX;
            storeName = "postgres";
        } else if (loop.startsWith("per-record-")) {
            kind = Loop.PER_RECORD;
            storeName = loop.substring("per-record-".length());
        } else {
            throw new IllegalArgumentException("unknown loop " + loop);
        }
        partition = KafkaFixture.prepareTopic();
        namespace = Trials.newNamespace();
        group = "dedup-" + namespace;
        consumer = KafkaFixture.consumer(group, MAX_POLL_RECORDS);
        consumer.assign(List.of(partition));
        consumer.seek(partition, 0);
        generation = 0;
        RecordKeys<String, String> header = RecordKeys.header();
        RecordKeys<String, String> keys = RecordKeys.of(record -> header.keyOf(record) + "/" + generation);
        String description = "no store";
        if (storeName != null) {
            fixture = BenchStore.named(storeName).open(0);
            store = fixture.openStore(namespace);
            description = fixture.description();
            if (kind != Loop.PER_RECORD) {
                KafkaRecordProcessor.Builder<String, String, Void> builder = KafkaRecordProcessor
                        .builder(consumer, store, ResultCodec.none())
                        .keys(keys)
                        .deadLetters(letter -> {
                            throw new IllegalStateException("no record should be dead-lettered: " + letter);
                        });
                if (kind == Loop.BATCH) {
                    builder.settleInBatches();
                } else if (kind == Loop.INBOX) {
                    builder.inbox(fixture.jdbcPool(), ((PostgresDedupStore) store)::inTransaction);
                }
                processor = builder.build();
            } else {
                perRecord = IdempotentConsumer.<ConsumerRecord<String, String>, Void>builder(store, keys::keyOf,
                        ResultCodec.none()).build();
            }
        }
        System.out.println("\n[bench] kafka loop " + loop + ": broker " + KafkaFixture.bootstrap() + ", topic "
                + KafkaFixture.TOPIC + " (" + KafkaFixture.RECORDS + " records, 1 partition), max.poll.records "
                + MAX_POLL_RECORDS + ", group " + group + "; store: " + description);
    }

    @TearDown(Level.Trial)
    public void close() {
        System.out.printf("%n[bench] kafka loop %s handled %,d records%n", loop, handled);
        try {
            consumer.close(Duration.ofSeconds(5));
            KafkaFixture.deleteGroup(group);
        } finally {
            if (fixture != null) {
                try {
                    store.close();
                    fixture.deleteNamespace(namespace);
                } finally {
                    fixture.close();
                }
            }
        }
    }

    /** One poll, processed and committed; returns how many records it had. */
    @Benchmark
    public int poll(Records counted) {
        rewindAtEnd();
        int records = switch (kind) {
            case NO_DEDUP -> pollWithoutDedup();
            case ADAPTER, BATCH, INBOX -> pollThroughAdapter();
            case PER_RECORD -> pollClaimingPerRecord();
        };
        counted.records += records;
        return records;
    }

    private int pollWithoutDedup() {
        ConsumerRecords<String, String> records = pollNonEmpty();
        long next = -1;
        for (ConsumerRecord<String, String> record : records) {
            handle(record);
            next = record.offset() + 1;
        }
        consumer.commitSync(Map.of(partition, new OffsetAndMetadata(next)));
        return records.count();
    }

    private int pollThroughAdapter() {
        long deadline = System.nanoTime() + NON_EMPTY_WITHIN.toNanos();
        while (true) {
            PollResult<String, String, Void> result = kind == Loop.INBOX
                    ? processor.poll(POLL_TIMEOUT, (record, transaction) -> handle(record))
                    : processor.poll(POLL_TIMEOUT, this::handle);
            int records = result.outcomes().size();
            if (records == 0) {
                requireBefore(deadline);
                continue;
            }
            if (result.count(ProcessingOutcome.Processed.class) != records || !result.rewound().isEmpty()
                    || result.commitFailure().isPresent()) {
                throw new IllegalStateException("a poll of fresh keys was not processed and committed in full: "
                        + result);
            }
            return records;
        }
    }

    private int pollClaimingPerRecord() {
        ConsumerRecords<String, String> records = pollNonEmpty();
        long next = -1;
        for (ConsumerRecord<String, String> record : records) {
            ProcessingOutcome<Void> outcome = perRecord.process(record, this::handle);
            if (!(outcome instanceof ProcessingOutcome.Processed)) {
                throw new IllegalStateException("the fresh key of record " + record.offset() + " was not processed: "
                        + outcome);
            }
            next = record.offset() + 1;
        }
        consumer.commitSync(Map.of(partition, new OffsetAndMetadata(next)));
        return records.count();
    }

    private Void handle(ConsumerRecord<String, String> record) {
        handled++;
        return null;
    }

    /** At the topic's end, reads it again from the start under a new key generation. */
    private void rewindAtEnd() {
        if (consumer.position(partition) >= KafkaFixture.RECORDS) {
            consumer.seek(partition, 0);
            generation++;
        }
    }

    private ConsumerRecords<String, String> pollNonEmpty() {
        long deadline = System.nanoTime() + NON_EMPTY_WITHIN.toNanos();
        while (true) {
            ConsumerRecords<String, String> records = consumer.poll(POLL_TIMEOUT);
            if (!records.isEmpty()) {
                return records;
            }
            requireBefore(deadline);
        }
    }

    private void requireBefore(long deadline) {
        if (System.nanoTime() - deadline > 0) {
            throw new IllegalStateException("no record from " + partition + " at offset "
                    + consumer.position(partition) + " within " + NON_EMPTY_WITHIN.toSeconds() + " s");
        }
    }
}
