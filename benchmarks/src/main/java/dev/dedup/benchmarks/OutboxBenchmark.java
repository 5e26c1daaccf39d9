package dev.dedup.benchmarks;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.benchmarks.fixture.KafkaFixture;
import dev.dedup.benchmarks.fixture.OutboxFixture;
import dev.dedup.outbox.Outbox;
import dev.dedup.outbox.OutboxRelay;
import dev.dedup.outbox.kafka.KafkaOutboxPublisher;
import dev.dedup.outbox.rabbitmq.RabbitOutboxPublisher;
import dev.dedup.rabbitmq.ConfirmedPublisher;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The transactional outbox on the harness's PostgreSQL, Kafka and RabbitMQ, one thread. Every trial works on tables
 * and a topic or queue of its own ({@code dedup_bench_outbox_<hex>}, {@code dedup-bench-outbox-<hex>}) and drops
 * them after.
 *
 * <ul>
 *   <li>{@link #businessTransaction} and {@link #businessTransactionWithAppend}: a business transaction (one
 *       {@code UPDATE} of a stock row, commit) on a connection borrowed from a HikariCP pool, without and with
 *       {@link Outbox#append} in it. Average time per transaction; their ratio is the append's cost.
 *   <li>{@link #relayBatch} and {@link #producerBatch}: events/s. The relay publishes a committed backlog of
 *       {@value #BATCH} events with one {@link OutboxRelay#relayOnce()} (select, publish, mark, commit); the bare
 *       producer sends the same {@value #BATCH} records (same key, payload and header sizes, same producer settings)
 *       and waits for every acknowledgement. The backlog is appended before each call, outside the measurement.
 *   <li>{@link #rabbitRelayBatch} and {@link #rabbitPublisherBatch}: the same pair on RabbitMQ, events/s. The relay
 *       publishes through {@link RabbitOutboxPublisher} (in waves of one event per key, each wave's confirms awaited
 *       together, so a key keeps its order), for 16 and for 100 distinct keys in the batch;
 *       RabbitMQ's own publisher sends the {@value #BATCH} messages on a channel in confirm mode (same exchange,
 *       routing keys, properties and sizes, mandatory) and then waits for all their confirms at once. A topic
 *       exchange routes every key to one queue, not durable and capped at 10,000 messages (the oldest dropped),
 *       so neither side waits for a disk (Kafka's acks=all does not either).
 *   <li>{@link #endToEnd}: one event appended and committed, then a KafkaConsumer polled until it receives it;
 *       the relay runs on its own thread, woken by LISTEN/NOTIFY. JMH's sample mode gives the percentiles.
 * </ul>
 */
@OutputTimeUnit(TimeUnit.SECONDS)
public class OutboxBenchmark {
    /** The relay's batch, and the bare producer's, from the issue. */
    public static final int BATCH = 100;
    private static final int KEYS = 16;
    private static final int STOCK_ROWS = 1_000;
    private static final byte[] PAYLOAD = "x".repeat(100).getBytes(StandardCharsets.UTF_8);
    private static final Map<String, String> HEADERS = Map.of("type", "StockReserved");
    private static final Duration RECEIVED_WITHIN = Duration.ofSeconds(10);

    /** Tables and topic names no other trial uses: {@code <prefix><12 hex digits>}. */
    static String unique(String prefix) {
        byte[] random = new byte[6];
        ThreadLocalRandom.current().nextBytes(random);
        return prefix + HexFormat.of().formatHex(random);
    }

    /** A stock table and an outbox table, on a pool of one connection. */
    @State(Scope.Benchmark)
    public static class Business {
        HikariDataSource pool;
        Outbox outbox;
        String stock;
        long next;

        @Setup(Level.Trial)
        public void open() {
            pool = OutboxFixture.pool("dedup-bench-outbox", 1);
            stock = unique("dedup_bench_stock_");
            OutboxFixture.execute(pool, "CREATE TABLE " + stock + " (sku text PRIMARY KEY, reserved bigint NOT NULL)");
            OutboxFixture.execute(pool, "INSERT INTO " + stock + " SELECT 'sku-' || i, 0 FROM generate_series(0, "
                    + (STOCK_ROWS - 1) + ") i");
            outbox = Outbox.builder(pool).table(unique("dedup_bench_outbox_")).build();
            outbox.createSchema();
        }

        @TearDown(Level.Trial)
        public void close() {
            try {
                outbox.dropSchema(null);
                OutboxFixture.execute(pool, "DROP TABLE IF EXISTS " + stock);
            } finally {
                pool.close();
            }
        }

        String nextSku() {
            return "sku-" + (next++ % STOCK_ROWS);
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public int businessTransaction(Business business) throws SQLException {
        try (Connection tx = business.pool.getConnection()) {
            tx.setAutoCommit(false);
            int updated = reserve(tx, business.stock, business.nextSku());
            tx.commit();
            return updated;
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public String businessTransactionWithAppend(Business business) throws SQLException {
        try (Connection tx = business.pool.getConnection()) {
            tx.setAutoCommit(false);
            String sku = business.nextSku();
            reserve(tx, business.stock, sku);
            String messageId = business.outbox.append(tx, "orders", sku, PAYLOAD, HEADERS);
            tx.commit();
            return messageId;
        }
    }

    private static int reserve(Connection tx, String stock, String sku) throws SQLException {
        try (PreparedStatement update = tx.prepareStatement(
                "UPDATE " + stock + " SET reserved = reserved + 1 WHERE sku = ?")) {
            update.setString(1, sku);
            return update.executeUpdate();
        }
    }

    /** A topic of the trial's own, one partition. */
    @State(Scope.Benchmark)
    public static class Topic {
        String name;

        @Setup(Level.Trial)
        public void create() {
            name = unique("dedup-bench-outbox-");
            OutboxFixture.createTopic(name);
        }

        @TearDown(Level.Trial)
        public void delete() {
            OutboxFixture.deleteTopic(name);
        }
    }

    /** An outbox, a relay on the Kafka publisher (not started: the benchmark drives it), and its backlog. */
    @State(Scope.Benchmark)
    public static class Relay {
        HikariDataSource pool;
        Outbox outbox;
        KafkaOutboxPublisher publisher;
        OutboxRelay relay;
        String topicName;

        @Setup(Level.Trial)
        public void open(Topic topic) {
            topicName = topic.name;
            pool = OutboxFixture.pool("dedup-bench-relay", 2);
            outbox = Outbox.builder(pool).table(unique("dedup_bench_outbox_")).build();
            outbox.createSchema();
            publisher = KafkaOutboxPublisher.create(OutboxFixture.producerConfig(), Duration.ofSeconds(30));
            relay = OutboxRelay.builder(outbox, publisher).batchSize(BATCH).build();
        }

        /** The next call's backlog: {@value #BATCH} events committed in one transaction. */
        @Setup(Level.Invocation)
        public void backlog() throws SQLException {
            appendBacklog(pool, outbox, topicName, KEYS);
        }

        @TearDown(Level.Trial)
        public void close() {
            try {
                relay.close();
                publisher.close();
                outbox.dropSchema(null);
            } finally {
                pool.close();
            }
        }
    }

    /** {@value #BATCH} events to {@code destination}, keys key-0..key-(keys - 1), committed in one transaction. */
    static void appendBacklog(HikariDataSource pool, Outbox outbox, String destination, int keys)
            throws SQLException {
        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            for (int i = 0; i < BATCH; i++) {
                outbox.append(tx, destination, "key-" + i % keys, PAYLOAD, HEADERS);
            }
            tx.commit();
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OperationsPerInvocation(BATCH)
    public int relayBatch(Relay relay) {
        return relayedAll(relay.relay);
    }

    private static int relayedAll(OutboxRelay relay) {
        int published = relay.relayOnce();
        if (published != BATCH) {
            throw new IllegalStateException("the relay published " + published + " of a backlog of " + BATCH);
        }
        return published;
    }

    /** The broker's own producer, with the publisher's settings. */
    @State(Scope.Benchmark)
    public static class Producer {
        KafkaProducer<String, byte[]> producer;
        String topicName;

        @Setup(Level.Trial)
        public void open(Topic topic) {
            producer = new KafkaProducer<>(OutboxFixture.producerConfig(), new StringSerializer(),
                    new ByteArraySerializer());
            topicName = topic.name;
        }

        @TearDown(Level.Trial)
        public void close() {
            producer.close(Duration.ofSeconds(10));
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OperationsPerInvocation(BATCH)
    public int producerBatch(Producer bare) throws InterruptedException, ExecutionException {
        List<Future<RecordMetadata>> acks = new ArrayList<>(BATCH);
        for (int i = 0; i < BATCH; i++) {
            ProducerRecord<String, byte[]> record = new ProducerRecord<>(bare.topicName, "key-" + i % KEYS, PAYLOAD);
            // The headers the publisher sends: message-id and the event's own.
            record.headers().add(KafkaFixture.MESSAGE_ID,
                    UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8));
            HEADERS.forEach((name, value) -> record.headers().add(name, value.getBytes(StandardCharsets.UTF_8)));
            acks.add(bare.producer.send(record));
        }
        for (Future<RecordMetadata> ack : acks) {
            ack.get();
        }
        return acks.size();
    }

    /** A topic exchange of the trial's own routing every key to one capped queue, and a connection to the broker. */
    @State(Scope.Benchmark)
    public static class RabbitQueue {
        /**
         * Distinct keys in a batch of {@value #BATCH}: the RabbitMQ publisher sends a batch in waves of one event per
         * key (a key's next event waits for the previous one's confirm), so 16 keys are 7 waves, 100 keys one.
         */
        @Param({"16", "100"})
        public int keys;
        com.rabbitmq.client.Connection connection;
        String exchange;

        @Setup(Level.Trial)
        public void declare() throws IOException {
            connection = OutboxFixture.rabbitConnection("dedup-bench-outbox");
            exchange = unique("dedup-bench-outbox-");
            try (Channel channel = connection.createChannel()) {
                channel.exchangeDeclare(exchange, "topic", false, false, null);
                // Nobody reads it during the trial: capped, so the broker's memory stays flat.
                channel.queueDeclare(exchange, false, false, false, Map.of("x-max-length", 10_000));
                channel.queueBind(exchange, exchange, "#");
            } catch (java.util.concurrent.TimeoutException e) {
                throw new IOException(e);
            }
        }

        @TearDown(Level.Trial)
        public void delete() throws IOException {
            try (Channel channel = connection.createChannel()) {
                channel.queueDelete(exchange);
                channel.exchangeDelete(exchange);
            } catch (java.util.concurrent.TimeoutException e) {
                throw new IOException(e);
            } finally {
                connection.close();
            }
        }
    }

    /** An outbox and a relay on the RabbitMQ publisher (not started: the benchmark drives it). */
    @State(Scope.Benchmark)
    public static class RabbitRelay {
        HikariDataSource pool;
        Outbox outbox;
        ConfirmedPublisher confirmed;
        OutboxRelay relay;
        String exchange;
        int keys;

        @Setup(Level.Trial)
        public void open(RabbitQueue queue) throws IOException {
            exchange = queue.exchange;
            keys = queue.keys;
            pool = OutboxFixture.pool("dedup-bench-rabbit-relay", 2);
            outbox = Outbox.builder(pool).table(unique("dedup_bench_outbox_")).build();
            outbox.createSchema();
            confirmed = ConfirmedPublisher.open(queue.connection, Duration.ofSeconds(30));
            relay = OutboxRelay.builder(outbox, new RabbitOutboxPublisher(confirmed)).batchSize(BATCH).build();
        }

        /** The next call's backlog: {@value #BATCH} events committed in one transaction. */
        @Setup(Level.Invocation)
        public void backlog() throws SQLException {
            appendBacklog(pool, outbox, exchange, keys);
        }

        @TearDown(Level.Trial)
        public void close() {
            try {
                relay.close();
                confirmed.close();
                outbox.dropSchema(null);
            } finally {
                pool.close();
            }
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OperationsPerInvocation(BATCH)
    public int rabbitRelayBatch(RabbitRelay relay) {
        return relayedAll(relay.relay);
    }

    /** RabbitMQ's own publisher: a channel in confirm mode. */
    @State(Scope.Benchmark)
    public static class RabbitPublisher {
        Channel channel;
        String exchange;
        int keys;

        @Setup(Level.Trial)
        public void open(RabbitQueue queue) throws IOException {
            channel = queue.connection.createChannel();
            channel.confirmSelect();
            exchange = queue.exchange;
            keys = queue.keys;
        }

        @TearDown(Level.Trial)
        public void close() throws IOException, java.util.concurrent.TimeoutException {
            channel.close();
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OperationsPerInvocation(BATCH)
    public int rabbitPublisherBatch(RabbitPublisher bare) throws IOException, InterruptedException,
            java.util.concurrent.TimeoutException {
        for (int i = 0; i < BATCH; i++) {
            // The properties the outbox's publisher sends: message-id, persistent, the event's headers.
            AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                    .messageId(UUID.randomUUID().toString()).deliveryMode(2).headers(new HashMap<>(HEADERS)).build();
            bare.channel.basicPublish(bare.exchange, "key-" + i % bare.keys, true, properties, PAYLOAD);
        }
        bare.channel.waitForConfirmsOrDie(30_000);
        return BATCH;
    }

    /** A running relay woken by LISTEN/NOTIFY, and a consumer at the end of the topic. */
    @State(Scope.Benchmark)
    public static class Pipeline {
        HikariDataSource pool;
        Outbox outbox;
        KafkaOutboxPublisher publisher;
        OutboxRelay relay;
        KafkaConsumer<String, byte[]> consumer;
        String topicName;

        @Setup(Level.Trial)
        public void open(Topic topic) {
            topicName = topic.name;
            // The relay's listening connection, its batch's, and the writer's.
            pool = OutboxFixture.pool("dedup-bench-pipeline", 3);
            outbox = Outbox.builder(pool).table(unique("dedup_bench_outbox_")).notifyRelays(true).build();
            outbox.createSchema();
            publisher = KafkaOutboxPublisher.create(OutboxFixture.producerConfig(), Duration.ofSeconds(30));
            // The poll is only the fallback (until the relay listens); the notification is what is measured.
            relay = OutboxRelay.builder(outbox, publisher).batchSize(BATCH).pollInterval(Duration.ofSeconds(1))
                    .build();
            relay.start();
            consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaFixture.bootstrap(),
                    ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new StringDeserializer(),
                    new ByteArrayDeserializer());
            TopicPartition partition = new TopicPartition(topicName, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            consumer.position(partition);
        }

        @TearDown(Level.Trial)
        public void close() {
            try {
                consumer.close(Duration.ofSeconds(5));
                relay.close();
                publisher.close();
                outbox.dropSchema(null);
            } finally {
                pool.close();
            }
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public String endToEnd(Pipeline pipeline) throws SQLException {
        String messageId;
        try (Connection tx = pipeline.pool.getConnection()) {
            tx.setAutoCommit(false);
            messageId = pipeline.outbox.append(tx, pipeline.topicName, "key", PAYLOAD, HEADERS);
            tx.commit();
        }
        long deadline = System.nanoTime() + RECEIVED_WITHIN.toNanos();
        while (System.nanoTime() - deadline < 0) {
            for (ConsumerRecord<String, byte[]> record : pipeline.consumer.poll(Duration.ofMillis(100))) {
                Header id = record.headers().lastHeader(KafkaFixture.MESSAGE_ID);
                if (id != null && messageId.equals(new String(id.value(), StandardCharsets.UTF_8))) {
                    return messageId;
                }
            }
        }
        throw new IllegalStateException("event " + messageId + " not received within "
                + RECEIVED_WITHIN.toSeconds() + " s of its commit");
    }
}
