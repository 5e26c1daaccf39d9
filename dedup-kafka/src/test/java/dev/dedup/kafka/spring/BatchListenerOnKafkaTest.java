package dev.dedup.kafka.spring;

import static dev.dedup.kafka.spring.SpringKafkaFixture.await;
import static dev.dedup.kafka.spring.SpringKafkaFixture.header;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.DedupStore;
import dev.dedup.MessageHandler;
import dev.dedup.ResultCodec;
import dev.dedup.kafka.DeadLetterTopic;
import dev.dedup.store.postgres.PostgresDedupStore;
import dev.dedup.tck.TestServers;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.BatchMessageListener;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.util.backoff.FixedBackOff;

/**
 * {@link IdempotentBatchListener} on a real batch container ({@code setBatchListener(true)}) with
 * {@link DedupErrorHandler} and a {@code DeadLetterPublishingRecoverer}, on the real broker and PostgreSQL: called
 * from a {@code @KafkaListener} method in a Spring context, and, for the inbox, set as the container's listener.
 * Every record is published before the container starts, so the first poll delivers them as one batch.
 */
@Timeout(90)
class BatchListenerOnKafkaTest {
    /** The two modes whose handler is a plain {@link MessageHandler}. */
    enum Mode {
        PER_RECORD, SETTLE_IN_BATCHES
    }

    /**
     * The application's listener bean: a batch method handing the poll to the wrapper (an
     * {@link IdempotentBatchListener}, here behind one that notes the batch sizes).
     */
    static class Orders {
        private final BatchMessageListener<String, String> dedup;

        Orders(BatchMessageListener<String, String> dedup) {
            this.dedup = dedup;
        }

        // kafka-doc:spring-batch-listener
        @KafkaListener(topics = "#{@ordersTopic}", batch = "true")
        public void onOrders(List<ConsumerRecord<String, String>> records) {
            dedup.onMessage(records);     // returns, or throws BatchListenerFailedException for the error handler
        }
        // end
    }

    @Configuration
    @EnableKafka
    static class Wiring {
        @Bean
        ConsumerFactory<String, String> consumerFactory(SpringKafkaFixture kafka) {
            return new DefaultKafkaConsumerFactory<>(Map.of(
                    ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap,
                    ConsumerConfig.GROUP_ID_CONFIG, kafka.group,
                    ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                    ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false),
                    new StringDeserializer(), new StringDeserializer());
        }

        @Bean
        KafkaTemplate<String, String> kafkaTemplate(SpringKafkaFixture kafka) {
            return new KafkaTemplate<>(new DefaultKafkaProducerFactory<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap,
                    ProducerConfig.ACKS_CONFIG, "all"),
                    new StringSerializer(), new StringSerializer()));
        }

        @Bean
        ConcurrentKafkaListenerContainerFactory<String, String> kafkaListenerContainerFactory(
                ConsumerFactory<String, String> consumerFactory, KafkaTemplate<String, String> template) {
            // kafka-doc:spring-batch-container
            var factory = new ConcurrentKafkaListenerContainerFactory<String, String>();
            factory.setConsumerFactory(consumerFactory);                // enable.auto.commit=false
            factory.setBatchListener(true);                             // AckMode BATCH, the default
            var recoverer = new DeadLetterPublishingRecoverer(template);    // to <topic>-dlt, same partition
            recoverer.setHeadersFunction(DedupErrorHandler.deadLetterHeaders());
            factory.setCommonErrorHandler(DedupErrorHandler.create(recoverer,
                    new FixedBackOff(100, 4), Duration.ofMillis(200)));
            // end
            return factory;
        }

        @Bean
        Orders orders(BatchMessageListener<String, String> dedup) {
            return new Orders(dedup);
        }
    }

    /** A non-retryable business failure, kept with the key. */
    static final class UnknownSkuException extends Exception {
        UnknownSkuException(String sku) {
            super("unknown SKU " + sku);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Mode.class)
    @DisplayName("a batch with duplicates: each message takes effect once, and every record is committed")
    void batchTakesEffectOnce(Mode mode) throws Exception {
        List<String> applied = new CopyOnWriteArrayList<>();
        List<Integer> batchSizes = new CopyOnWriteArrayList<>();
        try (SpringKafkaFixture kafka = new SpringKafkaFixture("spring-batch-dups");
                DedupStore store = SpringKafkaFixture.store("postgres")) {
            for (String id : List.of("order-1", "order-2", "order-1", "order-3", "order-2", "order-4")) {
                kafka.send(id, id);
            }
            var dedup = listener(mode, store, record -> {
                applied.add(record.value());
                return null;
            });
            try (AnnotationConfigApplicationContext context = start(kafka, dedup, batchSizes)) {
                await("every record committed", () -> kafka.committed() == 6);
                Thread.sleep(300);   // a wrongly re-run duplicate would show up by now
            }
            assertThat(batchSizes).as("delivered as a batch").anySatisfy(size -> assertThat(size).isGreaterThan(1));
            assertThat(applied).containsExactly("order-1", "order-2", "order-3", "order-4");
            assertThat(kafka.deadLetters(Duration.ofMillis(500))).isEmpty();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Mode.class)
    @DisplayName("a retryable failure mid-batch: the records before it are committed, it is retried and runs once,"
            + " the records after it run once")
    void retryableFailureMidBatch(Mode mode) throws Exception {
        List<String> applied = new CopyOnWriteArrayList<>();
        AtomicInteger attempts = new AtomicInteger();
        AtomicLong committedAtRetry = new AtomicLong(-2);
        try (SpringKafkaFixture kafka = new SpringKafkaFixture("spring-batch-retry");
                DedupStore store = SpringKafkaFixture.store("postgres")) {
            for (String id : List.of("m0", "m1", "flaky", "m3", "m4")) {
                kafka.send(id, id);
            }
            var dedup = listener(mode, store, record -> {
                if (record.value().equals("flaky")) {
                    if (attempts.incrementAndGet() == 1) {
                        throw new IllegalStateException("downstream unavailable");
                    }
                    committedAtRetry.set(kafka.committed());
                }
                applied.add(record.value());
                return null;
            });
            try (AnnotationConfigApplicationContext context = start(kafka, dedup, new CopyOnWriteArrayList<>())) {
                await("every record committed", () -> kafka.committed() == 5);
                Thread.sleep(300);
            }
            assertThat(attempts).as("the failing record came again once").hasValue(2);
            assertThat(committedAtRetry).as("committed up to the failed record, not past it, before its retry")
                    .hasValue(2);
            assertThat(applied).as("in partition order, once each").containsExactly("m0", "m1", "flaky", "m3", "m4");
            assertThat(kafka.deadLetters(Duration.ofMillis(500))).isEmpty();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Mode.class)
    @DisplayName("a kept failure mid-batch goes to the dead-letter topic once; the rest of the batch runs once")
    void keptFailureIsDeadLettered(Mode mode) throws Exception {
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        try (SpringKafkaFixture kafka = new SpringKafkaFixture("spring-batch-kept");
                DedupStore store = SpringKafkaFixture.store("postgres")) {
            for (String id : List.of("m0", "sku-404", "m2", "m3")) {
                kafka.send(id, id);
            }
            IdempotentBatchListener.Builder<String, String, Void> builder = IdempotentBatchListener
                    .<String, String, Void>builder(store, ResultCodec.none(), record -> {
                        runs.computeIfAbsent(record.value(), v -> new AtomicInteger()).incrementAndGet();
                        if (record.value().equals("sku-404")) {
                            throw new UnknownSkuException("sku-404");
                        }
                        return null;
                    })
                    .keepKeyOn(e -> e instanceof UnknownSkuException);
            var dedup = (mode == Mode.SETTLE_IN_BATCHES ? builder.settleInBatches() : builder).build();
            try (AnnotationConfigApplicationContext context = start(kafka, dedup, new CopyOnWriteArrayList<>())) {
                await("every record committed", () -> kafka.committed() == 4);
            }
            List<ConsumerRecord<String, String>> letters = kafka.deadLetters(Duration.ofSeconds(1));
            assertThat(letters).as("exactly one dead letter").hasSize(1);
            assertThat(letters.get(0).value()).isEqualTo("sku-404");
            assertThat(header(letters.get(0), DeadLetterTopic.REASON_HEADER)).isEqualTo("FAILED");
            assertThat(header(letters.get(0), DeadLetterTopic.ERROR_HEADER)).contains("unknown SKU sku-404");
            assertThat(header(letters.get(0), DeadLetterTopic.ORIGIN_HEADER)).isEqualTo(kafka.topic + "-0@1");
            assertThat(runs).as("each handler ran once, the kept failure never retried")
                    .containsOnlyKeys("m0", "sku-404", "m2", "m3")
                    .allSatisfy((value, count) -> assertThat(count).as(value).hasValue(1));
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Mode.class)
    @DisplayName("an Error from one record's handler: that record alone is retried and dead-lettered; the records"
            + " after it still run once")
    void anErrorIsReportedAgainstItsRecord(Mode mode) throws Exception {
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        try (SpringKafkaFixture kafka = new SpringKafkaFixture("spring-batch-error");
                DedupStore store = SpringKafkaFixture.store("postgres")) {
            for (String id : List.of("m0", "poison", "m2", "m3")) {
                kafka.send(id, id);
            }
            var dedup = listener(mode, store, record -> {
                runs.computeIfAbsent(record.value(), v -> new AtomicInteger()).incrementAndGet();
                if (record.value().equals("poison")) {
                    throw new AssertionError("a broken invariant in the handler");
                }
                return null;
            });
            try (AnnotationConfigApplicationContext context = start(kafka, dedup, new CopyOnWriteArrayList<>())) {
                await("every record committed", () -> kafka.committed() == 4);
            }
            List<ConsumerRecord<String, String>> letters = kafka.deadLetters(Duration.ofSeconds(1));
            assertThat(letters).as("dead letters").extracting(ConsumerRecord::value).containsExactly("poison");
            assertThat(runs.get("poison")).as("the first run and the error handler's 4 retries").hasValue(5);
            assertThat(runs).as("the records after it ran, once each").containsKeys("m0", "m2", "m3");
            for (String value : List.of("m0", "m2", "m3")) {
                assertThat(runs.get(value)).as(value).hasValue(1);
            }
        }
    }

    /** The inbox test's effect: a row per record, through the batch's transaction; fails on m2 twice. */
    static final class Reservations {
        final String table = "spring_batch_inbox_" + SpringKafkaFixture.unique();
        final AtomicInteger m2Attempts = new AtomicInteger();
        final AtomicReference<String> beforeRetry = new AtomicReference<>();
        private final HikariDataSource pool;
        private final PostgresDedupStore store;
        private final SpringKafkaFixture kafka;

        Reservations(HikariDataSource pool, PostgresDedupStore store, SpringKafkaFixture kafka) {
            this.pool = pool;
            this.store = store;
            this.kafka = kafka;
        }

        void insert(Connection transaction, String id) throws Exception {
            int attempt = id.equals("m2") ? m2Attempts.incrementAndGet() : 0;
            if (attempt == 3) {   // the error handler's retry: what the two failures left behind
                beforeRetry.set("rows " + rows().getOrDefault("m2", 0) + ", key "
                        + store.inspect("m2").map(key -> "held").orElse("free") + ", committed " + kafka.committed());
            }
            try (PreparedStatement insert = transaction.prepareStatement("INSERT INTO " + table + " VALUES (?)")) {
                insert.setString(1, id);
                insert.executeUpdate();
            }
            if (attempt == 1 || attempt == 2) {   // in the batch's transaction, then alone in its own
                throw new IllegalStateException("m2 fails after its write, attempt " + attempt);
            }
        }

        /** The committed rows per id. */
        Map<String, Integer> rows() throws SQLException {
            Map<String, Integer> rows = new HashMap<>();
            try (Connection db = pool.getConnection(); var statement = db.createStatement();
                    ResultSet result = statement.executeQuery("SELECT id, count(*) FROM " + table + " GROUP BY id")) {
                while (result.next()) {
                    rows.put(result.getString(1), result.getInt(2));
                }
            }
            return rows;
        }

        void execute(String sql) throws SQLException {
            try (Connection db = pool.getConnection(); var statement = db.createStatement()) {
                statement.execute(sql);
            }
        }
    }

    @Test
    @DisplayName("inbox mode on PostgreSQL: each effect row once; a failed handler's writes and claim are rolled back,"
            + " and the record then runs once")
    void inboxRollsBackAFailureAndRunsItOnce() throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestServers.require("PostgreSQL 15", "DEDUP_TEST_POSTGRES_URL", null));
        config.setMaximumPoolSize(4);
        try (SpringKafkaFixture kafka = new SpringKafkaFixture("spring-batch-inbox");
                PostgresDedupStore store = (PostgresDedupStore) SpringKafkaFixture.store("postgres");
                HikariDataSource dataSource = new HikariDataSource(config)) {
            Reservations reservations = new Reservations(dataSource, store, kafka);
            reservations.execute("CREATE TABLE " + reservations.table + " (id text NOT NULL)");
            try {
                for (String id : List.of("m0", "m1", "m2", "m3", "m4")) {
                    kafka.send(id, id);
                }
                // kafka-doc:spring-batch-inbox
                var dedup = IdempotentBatchListener.<String, String, Void>inbox(store, ResultCodec.none(),
                        dataSource, store::inTransaction, (record, transaction) -> {
                            reservations.insert(transaction, record.value());   // never commit it here
                            return null;
                        }).build();
                // end
                runContainer(kafka, dedup, () -> kafka.committed() == 5);
                assertThat(reservations.rows()).as("each effect row once")
                        .containsExactlyInAnyOrderEntriesOf(Map.of("m0", 1, "m1", 1, "m2", 1, "m3", 1, "m4", 1));
            } finally {
                reservations.execute("DROP TABLE IF EXISTS " + reservations.table);
            }
            assertThat(reservations.m2Attempts).as("twice in the first delivery, once in its retry").hasValue(3);
            assertThat(reservations.beforeRetry).as("before the retry: no row, key free, committed up to m2")
                    .hasValue("rows 0, key free, committed 2");
            assertThat(kafka.deadLetters(Duration.ofMillis(500))).isEmpty();
        }
    }

    /** The inbox listener set as a batch container's own listener, run until {@code done}. */
    private static void runContainer(SpringKafkaFixture kafka, IdempotentBatchListener<String, String, Void> dedup,
            SpringKafkaFixture.Check done) throws Exception {
        Wiring wiring = new Wiring();
        KafkaTemplate<String, String> template = wiring.kafkaTemplate(kafka);
        ConcurrentMessageListenerContainer<String, String> container = wiring
                .kafkaListenerContainerFactory(wiring.consumerFactory(kafka), template).createContainer(kafka.topic);
        container.setupMessageListener(dedup);
        container.start();
        try {
            await("the batch committed", done);
            Thread.sleep(300);
        } finally {
            container.stop();
            template.getProducerFactory().reset();
        }
    }

    @Test
    @DisplayName("every kafka-doc region of this test is a Java block of docs/kafka.md")
    void docShowsTheCompiledWiring() throws IOException {
        assertThat(SpringKafkaFixture.docRegionsMissing("BatchListenerOnKafkaTest.java", 3)).isEmpty();
    }

    private static IdempotentBatchListener<String, String, Void> listener(Mode mode, DedupStore store,
            MessageHandler<ConsumerRecord<String, String>, Void> handler) {
        var builder = IdempotentBatchListener.<String, String, Void>builder(store, ResultCodec.none(), handler);
        return (mode == Mode.SETTLE_IN_BATCHES ? builder.settleInBatches() : builder).build();
    }

    private static AnnotationConfigApplicationContext start(SpringKafkaFixture kafka,
            IdempotentBatchListener<String, String, Void> dedup, List<Integer> batchSizes) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.registerBean("ordersTopic", String.class, () -> kafka.topic);
        context.registerBean(SpringKafkaFixture.class, () -> kafka);
        BatchMessageListener<String, String> noting = records -> {
            batchSizes.add(records.size());
            dedup.onMessage(records);
        };
        context.registerBean(BatchMessageListener.class, () -> noting);
        context.register(Wiring.class);
        context.refresh();
        return context;
    }
}
