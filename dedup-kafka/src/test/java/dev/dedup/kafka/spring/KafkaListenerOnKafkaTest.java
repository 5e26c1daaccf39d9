package dev.dedup.kafka.spring;

import static dev.dedup.kafka.spring.SpringKafkaFixture.await;
import static dev.dedup.kafka.spring.SpringKafkaFixture.header;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.MessageHandler;
import dev.dedup.ResultCodec;
import dev.dedup.kafka.DeadLetterTopic;
import dev.dedup.kafka.RecordKeys;
import dev.dedup.kafka.WatchedStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
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
import org.junit.jupiter.params.provider.ValueSource;
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
import org.springframework.kafka.listener.ContainerProperties.AckMode;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.util.backoff.FixedBackOff;

/**
 * The documented {@code @KafkaListener} use, in a Spring context with {@code @EnableKafka} (no Spring Boot), on the
 * real broker and the real PostgreSQL and Redis stores: a listener method that hands each record to
 * {@link IdempotentRecordListener}, and a container with {@link DedupErrorHandler} and a
 * {@code DeadLetterPublishingRecoverer}.
 */
@Timeout(90)
class KafkaListenerOnKafkaTest {
    /** The application's listener bean: the wrapper the docs describe. */
    static class Orders {
        private final IdempotentRecordListener<String, String, Void> dedup;

        Orders(IdempotentRecordListener<String, String, Void> dedup) {
            this.dedup = dedup;
        }

        // kafka-doc:spring-listener
        @KafkaListener(topics = "#{@ordersTopic}")
        public void onOrder(ConsumerRecord<String, String> record) {
            dedup.onMessage(record);     // returns, or throws for the error handler
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
                ConsumerFactory<String, String> consumerFactory, KafkaTemplate<String, String> template,
                AckMode ackMode) {
            // kafka-doc:spring-container
            var factory = new ConcurrentKafkaListenerContainerFactory<String, String>();
            factory.setConsumerFactory(consumerFactory);                // enable.auto.commit=false
            factory.getContainerProperties().setAckMode(ackMode);      // RECORD or BATCH (the default)
            var recoverer = new DeadLetterPublishingRecoverer(template);    // to <topic>-dlt, same partition
            recoverer.setHeadersFunction(DedupErrorHandler.deadLetterHeaders());
            factory.setCommonErrorHandler(DedupErrorHandler.create(recoverer,
                    new FixedBackOff(100, 4),      // a retryable handler failure: 4 retries, then the recoverer
                    Duration.ofMillis(200)));      // a key held elsewhere: retried without a limit
            // end
            return factory;
        }

        @Bean
        Orders orders(IdempotentRecordListener<String, String, Void> dedup) {
            return new Orders(dedup);
        }
    }

    /** The side effect of the docs' example. */
    interface Inventory {
        void reserve(String order) throws Exception;
    }

    /** The listener of docs/kafka.md: reserves stock once per message id, dead-letters an unknown SKU. */
    static IdempotentRecordListener<String, String, Void> reserving(DedupStore store, Inventory inventory) {
        // kafka-doc:spring-build
        IdempotentRecordListener<String, String, Void> dedup = IdempotentRecordListener
                .<String, String, Void>builder(store, ResultCodec.none(), record -> {
                    inventory.reserve(record.value());          // your side effect: once per message id
                    return null;
                })
                .keys(RecordKeys.header("message-id"))         // the default: the id the producer set
                .lease(Duration.ofSeconds(30))                  // longer than the slowest handler
                .retention(Duration.ofDays(7))                  // longer than the longest replay of the topic
                .keepKeyOn(e -> e instanceof UnknownSkuException)   // final: dead-lettered, never retried
                .build();
        // end
        return dedup;
    }

    /** A non-retryable business failure, kept with the key. */
    static final class UnknownSkuException extends Exception {
        UnknownSkuException(String sku) {
            super("unknown SKU " + sku);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"postgres", "redis"})
    @DisplayName("a message published twice takes effect once, and every copy is committed past")
    void duplicatesTakeEffectOnce(String storeKind) throws Exception {
        List<String> applied = new CopyOnWriteArrayList<>();
        try (SpringKafkaFixture kafka = new SpringKafkaFixture("spring-dups");
                DedupStore store = SpringKafkaFixture.store(storeKind)) {
            var dedup = listener(store, record -> {
                applied.add(record.value());
                return null;
            });
            try (AnnotationConfigApplicationContext context = start(kafka, dedup, AckMode.BATCH)) {
                kafka.send("order-1", "a");
                kafka.send("order-1", "a");
                kafka.send("order-2", "b");
                kafka.send("order-1", "a");

                await("every copy committed past", () -> kafka.committed() == 4);
                Thread.sleep(300);   // a wrongly re-run duplicate would show up by now
            }
            assertThat(applied).containsExactly("a", "b");
            assertThat(kafka.deadLetters(Duration.ofMillis(500))).isEmpty();
        }
    }

    @Test
    @DisplayName("a handler that fails retryably is retried by the error handler and then takes effect once")
    void retryableFailureIsRetriedThenAppliedOnce() throws Exception {
        List<String> applied = new CopyOnWriteArrayList<>();
        AtomicInteger attempts = new AtomicInteger();
        try (SpringKafkaFixture kafka = new SpringKafkaFixture("spring-retry");
                DedupStore store = SpringKafkaFixture.store("postgres")) {
            var dedup = listener(store, record -> {
                if (record.value().equals("flaky") && attempts.incrementAndGet() <= 2) {
                    throw new IllegalStateException("downstream unavailable (attempt " + attempts.get() + ")");
                }
                applied.add(record.value());
                return null;
            });
            try (AnnotationConfigApplicationContext context = start(kafka, dedup, AckMode.RECORD)) {
                kafka.send("order-1", "flaky");
                kafka.send("order-2", "steady");
                kafka.send("order-1", "flaky");    // its duplicate, after the retries

                await("all committed past", () -> kafka.committed() == 3);
                Thread.sleep(300);
            }
            assertThat(attempts).hasValue(3);
            assertThat(applied).as("in partition order, once each").containsExactly("flaky", "steady");
            assertThat(kafka.deadLetters(Duration.ofMillis(500))).isEmpty();
        }
    }

    @Test
    @DisplayName("a store outage before the claim is retried until the store is back, never dead-lettered")
    void storeOutageIsNotAnAttempt() throws Exception {
        List<String> applied = new CopyOnWriteArrayList<>();
        try (SpringKafkaFixture kafka = new SpringKafkaFixture("spring-outage");
                DedupStore real = SpringKafkaFixture.store("postgres")) {
            WatchedStore store = new WatchedStore(real);
            var dedup = listener(store, record -> {
                applied.add(record.value());
                return null;
            });
            try (AnnotationConfigApplicationContext context = start(kafka, dedup, AckMode.RECORD)) {
                kafka.send("order-0", "first");
                await("the consumer runs", () -> kafka.committed() == 1);
                store.kill();   // every store call fails from here, before it reaches the server
                kafka.send("order-1", "during the outage");
                Thread.sleep(2_000);   // the handler-failure back-off (4 retries, 100 ms) would have given up by now
                assertThat(kafka.committed()).as("not committed past while the store is down").isEqualTo(1);
                store.revive();
                await("committed once the store is back", () -> kafka.committed() == 2);
            }
            assertThat(applied).containsExactly("first", "during the outage");
            assertThat(kafka.deadLetters(Duration.ofMillis(500))).as("an outage sends nothing to the dead letters")
                    .isEmpty();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = AckMode.class, names = {"RECORD", "BATCH"})
    @DisplayName("a record whose key another claim holds is not committed past, and runs once the claim is released")
    void keyHeldElsewhereWaitsForTheClaim(AckMode ackMode) throws Exception {
        List<String> applied = new CopyOnWriteArrayList<>();
        try (SpringKafkaFixture kafka = new SpringKafkaFixture("spring-held");
                DedupStore store = SpringKafkaFixture.store("postgres")) {
            Claim held = (Claim) store.claim("order-1", Duration.ofSeconds(60));   // another consumer's claim
            var dedup = listener(store, record -> {
                applied.add(record.value());
                return null;
            });
            try (AnnotationConfigApplicationContext context = start(kafka, dedup, ackMode)) {
                kafka.send("order-0", "first");
                kafka.send("order-1", "held");
                kafka.send("order-2", "behind");

                await("the record before the held one committed", () -> kafka.committed() >= 1);
                Thread.sleep(2_000);   // several retries of the held record
                assertThat(kafka.committed()).as("never past the held record").isEqualTo(1);
                assertThat(applied).as("nothing behind it ran").containsExactly("first");

                assertThat(store.release(held)).isTrue();
                await("all committed past", () -> kafka.committed() == 3);
            }
            assertThat(applied).containsExactly("first", "held", "behind");
            assertThat(kafka.deadLetters(Duration.ofMillis(500))).isEmpty();
        }
    }

    @Test
    @DisplayName("a non-retryable failure is dead-lettered exactly once; its republish goes there as ALREADY_FAILED")
    void keptFailureIsDeadLetteredOnce() throws Exception {
        List<String> applied = new CopyOnWriteArrayList<>();
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        try (SpringKafkaFixture kafka = new SpringKafkaFixture("spring-kept");
                DedupStore store = SpringKafkaFixture.store("postgres")) {
            var dedup = reserving(store, order -> {
                runs.computeIfAbsent(order, v -> new AtomicInteger()).incrementAndGet();
                if (order.startsWith("sku-404")) {
                    throw new UnknownSkuException("sku-404");
                }
                applied.add(order);
            });
            try (AnnotationConfigApplicationContext context = start(kafka, dedup, AckMode.BATCH)) {
                kafka.send("order-1", "sku-404 x 1");
                kafka.send("order-2", "sku-1 x 2");

                await("both committed past", () -> kafka.committed() == 2);
                List<ConsumerRecord<String, String>> letters = kafka.deadLetters(Duration.ofSeconds(1));
                assertThat(letters).as("exactly one dead letter").hasSize(1);
                assertThat(letters.get(0).value()).isEqualTo("sku-404 x 1");
                assertThat(header(letters.get(0), DeadLetterTopic.REASON_HEADER)).isEqualTo("FAILED");
                assertThat(header(letters.get(0), DeadLetterTopic.ERROR_HEADER)).contains("unknown SKU sku-404");
                assertThat(header(letters.get(0), DeadLetterTopic.ORIGIN_HEADER)).isEqualTo(kafka.topic + "-0@0");

                kafka.send("order-1", "sku-404 x 1");   // the same message again
                await("the republish committed past", () -> kafka.committed() == 3);
                letters = kafka.deadLetters(Duration.ofSeconds(1));
                assertThat(letters).hasSize(2);
                assertThat(header(letters.get(1), DeadLetterTopic.REASON_HEADER)).isEqualTo("ALREADY_FAILED");
            }
            assertThat(runs.get("sku-404 x 1")).as("the failing handler ran once, never retried").hasValue(1);
            assertThat(applied).containsExactly("sku-1 x 2");
        }
    }

    @Test
    @DisplayName("a record without a message-id header is never run: it goes to the dead-letter topic as NO_KEY")
    void recordWithoutKeyIsDeadLettered() throws Exception {
        List<String> applied = new CopyOnWriteArrayList<>();
        try (SpringKafkaFixture kafka = new SpringKafkaFixture("spring-nokey");
                DedupStore store = SpringKafkaFixture.store("postgres")) {
            var dedup = listener(store, record -> {
                applied.add(record.value());
                return null;
            });
            try (AnnotationConfigApplicationContext context = start(kafka, dedup, AckMode.BATCH)) {
                kafka.send("order-1", "v0");
                kafka.send(null, "keyless");
                kafka.send("order-2", "v2");

                await("all committed past", () -> kafka.committed() == 3);
            }
            assertThat(applied).containsExactly("v0", "v2");
            List<ConsumerRecord<String, String>> letters = kafka.deadLetters(Duration.ofSeconds(1));
            assertThat(letters).hasSize(1);
            assertThat(letters.get(0).value()).isEqualTo("keyless");
            assertThat(header(letters.get(0), DeadLetterTopic.REASON_HEADER)).isEqualTo("NO_KEY");
            assertThat(header(letters.get(0), DeadLetterTopic.ERROR_HEADER)).contains("message-id");
            assertThat(header(letters.get(0), "kafka_dlt-exception-cause-fqcn"))
                    .as("the listener's exception, under the container's wrapper")
                    .isEqualTo(DeadLetterRecordException.class.getName());
        }
    }

    @Test
    @DisplayName("a record reusing a key with another payload fingerprint goes to the dead-letter topic as KEY_REUSED")
    void reusedKeyIsDeadLettered() throws Exception {
        List<String> applied = new CopyOnWriteArrayList<>();
        try (SpringKafkaFixture kafka = new SpringKafkaFixture("spring-reused");
                DedupStore store = SpringKafkaFixture.store("postgres")) {
            var dedup = IdempotentRecordListener.<String, String, Void>builder(store, ResultCodec.none(), record -> {
                applied.add(record.value());
                return null;
            }).fingerprint(record -> record.value().getBytes(StandardCharsets.UTF_8)).build();
            try (AnnotationConfigApplicationContext context = start(kafka, dedup, AckMode.BATCH)) {
                kafka.send("order-1", "sku-1 x 2");
                kafka.send("order-1", "sku-1 x 2");
                kafka.send("order-1", "sku-9 x 50");
                kafka.send("order-2", "sku-2 x 1");

                await("all committed past", () -> kafka.committed() == 4);
            }
            assertThat(applied).containsExactly("sku-1 x 2", "sku-2 x 1");
            List<ConsumerRecord<String, String>> letters = kafka.deadLetters(Duration.ofSeconds(1));
            assertThat(letters).as("only the reused key is dead-lettered, not the redelivery").hasSize(1);
            assertThat(letters.get(0).value()).isEqualTo("sku-9 x 50");
            assertThat(header(letters.get(0), DeadLetterTopic.REASON_HEADER)).isEqualTo("KEY_REUSED");
            assertThat(header(letters.get(0), DeadLetterTopic.ORIGIN_HEADER)).isEqualTo(kafka.topic + "-0@2");
        }
    }

    @Test
    @DisplayName("every kafka-doc region of this test is a Java block of docs/kafka.md")
    void docShowsTheCompiledWiring() throws IOException {
        assertThat(SpringKafkaFixture.docRegionsMissing("KafkaListenerOnKafkaTest.java", 3)).isEmpty();
    }

    private static IdempotentRecordListener<String, String, Void> listener(DedupStore store,
            MessageHandler<ConsumerRecord<String, String>, Void> handler) {
        return IdempotentRecordListener.<String, String, Void>builder(store, ResultCodec.none(), handler).build();
    }

    private static AnnotationConfigApplicationContext start(SpringKafkaFixture kafka,
            IdempotentRecordListener<String, String, Void> dedup, AckMode ackMode) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.registerBean("ordersTopic", String.class, () -> kafka.topic);
        context.registerBean(SpringKafkaFixture.class, () -> kafka);
        context.registerBean(AckMode.class, () -> ackMode);
        context.registerBean(IdempotentRecordListener.class, () -> dedup);
        context.register(Wiring.class);
        context.refresh();
        return context;
    }
}
