package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.transaction.KafkaTransactionManager;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link Idempotent} inside Spring Kafka's transactions (exactly-once: {@code spring.kafka.producer.transaction-id-prefix}),
 * on the real broker and PostgreSQL. Spring Kafka's {@code KafkaTransactionManager} does no transaction
 * synchronization by default, so a result cannot wait for the commit: an application like that is refused at startup
 * (an {@code @Idempotent} listener) or at the call (an {@code @Idempotent} bean inside the transaction), with the fix
 * in the message. With synchronization on, a listener transaction that rolls back after the method returned frees its
 * key: the redelivery runs the method again, and a read-committed consumer sees its output once.
 */
class IdempotentInKafkaTransactionOnKafkaTest {

    @Test
    void anIdempotentListenerUnderKafkasDefaultTransactionManagerIsRefusedAtStartup() {
        String topic = Servers.unique("boot-ktx-check");
        assertThatThrownBy(() -> {
            try (ConfigurableApplicationContext context = start(topic, ListenerApp.class)) {
                context.getBean(ListenerApp.class);
            }
        }).hasRootCauseInstanceOf(DedupConfigurationException.class)
                .rootCause().hasMessageContaining("does no transaction synchronization")
                .hasMessageContaining("ListenerApp.on")
                .hasMessageContaining("setTransactionSynchronization(AbstractPlatformTransactionManager.SYNCHRONIZATION_ALWAYS)");
    }

    @Test
    void anIdempotentBeanInsideAnUnsynchronizedKafkaTransactionIsRefusedAndDoesNotRun() {
        String topic = Servers.unique("boot-ktx-call");
        try (ConfigurableApplicationContext context = start(topic, TransferApp.class)) {
            Transfers transfers = context.getBean(Transfers.class);
            TransactionTemplate inKafkaTransaction =
                    new TransactionTemplate(context.getBean(KafkaTransactionManager.class));

            assertThatThrownBy(() -> inKafkaTransaction.executeWithoutResult(status -> transfers.forward("t-1")))
                    .isInstanceOf(DedupConfigurationException.class)
                    .hasMessageContaining("Transfers.forward")
                    .hasMessageContaining("SYNCHRONIZATION_ALWAYS");
            assertThat(transfers.runs("t-1")).isZero();
        }
    }

    @Test
    void withSynchronizationOnARollbackAfterTheMethodReturnedFreesItsKeyAndTheOutputCommitsOnce() throws Exception {
        String topic = Servers.unique("boot-ktx");
        try (ConfigurableApplicationContext context = start(topic, TransferApp.class, Synchronized.class);
                KafkaConsumer<String, String> outputs = readCommitted(topic + "-out")) {
            KafkaTemplate<String, String> kafka = context.getBean(KafkaTemplate.class);
            Transfers transfers = context.getBean(Transfers.class);
            kafka.executeInTransaction(template -> {
                template.send(topic, "t-ok");
                template.send(topic, "t-rollback-once");   // the listener throws after forward() returned, once
                template.send(topic, "t-ok");             // again: replayed, forwarded once
                template.send(topic, "t-end");
                return null;
            });

            List<String> forwarded = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!forwarded.contains("t-end") && System.nanoTime() < deadline) {
                outputs.poll(Duration.ofMillis(200)).forEach(record -> forwarded.add(record.value()));
            }

            assertThat(forwarded).as("committed outputs").containsExactlyInAnyOrder("t-ok", "t-rollback-once", "t-end");
            assertThat(transfers.runs("t-rollback-once")).as("the rolled-back run, and the redelivery's").isEqualTo(2);
            assertThat(transfers.runs("t-ok")).isEqualTo(1);
        }
    }

    @Test
    void withSynchronizationOnARecordWhoseKeyIsHeldIsRetriedAfterEachRollbackUntilTheHolderIsDone() throws Exception {
        String topic = Servers.unique("boot-ktx-held");
        try (ConfigurableApplicationContext context = start(topic, HeldKeyApp.class, Synchronized.class)) {
            KafkaTemplate<String, String> kafka = context.getBean(KafkaTemplate.class);
            DedupStore store = context.getBean(DedupStore.class);
            HeldKeyListener listener = context.getBean(HeldKeyListener.class);
            String held = Servers.unique("held");
            Claim holder = (Claim) store.claim("held:" + held, Duration.ofSeconds(30));
            kafka.executeInTransaction(template -> {
                template.send(topic, held);
                template.send(topic, "after-" + held);
                return null;
            });

            // Each retry after a rollback takes about a second here: 6 s of retries must not pass the held record.
            Thread.sleep(6_000);
            assertThat(listener.runs(held)).as("not while the holder runs").isZero();
            assertThat(listener.runs("after-" + held)).as("nothing passes the held record").isZero();
            store.release(holder);

            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (listener.runs("after-" + held) == 0 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(listener.runs(held)).isEqualTo(1);
            assertThat(listener.runs("after-" + held)).isEqualTo(1);
        }
    }

    private static ConfigurableApplicationContext start(String topic, Class<?>... sources) {
        return new SpringApplicationBuilder(sources).web(WebApplicationType.NONE)
                .run("--spring.kafka.bootstrap-servers=" + Servers.kafkaBootstrap(),
                        "--spring.kafka.producer.transaction-id-prefix=" + topic + "-tx-",
                        "--spring.kafka.consumer.auto-offset-reset=earliest",
                        "--spring.kafka.consumer.isolation-level=read-committed",
                        "--spring.datasource.url=" + Servers.postgresJdbcUrl(),
                        "--dedup.store.create-schema=true",
                        "--dedup.namespace=" + Servers.unique("boot-ktx"),
                        "--test.topic=" + topic);
    }

    private static KafkaConsumer<String, String> readCommitted(String topic) {
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, Servers.kafkaBootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, Servers.unique("reader"),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"),
                new StringDeserializer(), new StringDeserializer());
        consumer.subscribe(List.of(topic));
        return consumer;
    }

    /** {@code @Idempotent} on the listener method itself. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(TestTopic.class)
    static class ListenerApp {
        @KafkaListener(topics = "${test.topic}", groupId = "${test.topic}")
        @Idempotent(key = "#record.value()")
        public void on(ConsumerRecord<String, String> record) {
            // never started: the application is refused
        }
    }

    /** A plain listener calling an {@code @Idempotent} bean that forwards each record in the listener's transaction. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(TestTopic.class)
    static class TransferApp {
        @Bean
        NewTopic output(Environment environment) {
            return new NewTopic(environment.getRequiredProperty("test.topic") + "-out", 1, (short) 1);
        }

        @Bean
        Transfers transfers(KafkaTemplate<String, String> kafka, Environment environment) {
            return new Transfers(kafka, environment.getRequiredProperty("test.topic") + "-out");
        }

        @Bean
        TransferListener transferListener(Transfers transfers) {
            return new TransferListener(transfers);
        }
    }

    static class TransferListener {
        private final Transfers transfers;
        private final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();

        TransferListener(Transfers transfers) {
            this.transfers = transfers;
        }

        @KafkaListener(topics = "${test.topic}", groupId = "${test.topic}")
        public void on(ConsumerRecord<String, String> record) {
            transfers.forward(record.value());
            int delivery = deliveries.computeIfAbsent(record.value(), v -> new AtomicInteger()).incrementAndGet();
            if (record.value().startsWith("t-rollback-once") && delivery == 1) {
                // After forward() returned: the listener's transaction rolls back, its output with it.
                throw new IllegalStateException("the first delivery of " + record.value() + " rolls back");
            }
        }
    }

    public static class Transfers {
        private final KafkaTemplate<String, String> kafka;
        private final String output;
        private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

        Transfers(KafkaTemplate<String, String> kafka, String output) {
            this.kafka = kafka;
            this.output = output;
        }

        /** Forwards the transfer, in the caller's Kafka transaction; once per id. */
        @Idempotent(key = "#id")
        public void forward(String id) {
            runs.computeIfAbsent(id, i -> new AtomicInteger()).incrementAndGet();
            kafka.send(output, id);
        }

        int runs(String id) {
            AtomicInteger count = runs.get(id);
            return count == null ? 0 : count.get();
        }
    }

    /** An {@code @Idempotent} listener whose runs are counted, for the held-key test. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(TestTopic.class)
    static class HeldKeyApp {
        @Bean
        HeldKeyListener heldKeyListener() {
            return new HeldKeyListener();
        }
    }

    public static class HeldKeyListener {
        private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

        @KafkaListener(topics = "${test.topic}", groupId = "${test.topic}")
        @Idempotent(key = "#record.value()", scope = "held")
        public void on(ConsumerRecord<String, String> record) {
            runs.computeIfAbsent(record.value(), v -> new AtomicInteger()).incrementAndGet();
        }

        /** Through a method: the bean is a proxy, whose own fields are empty. */
        public int runs(String value) {
            AtomicInteger count = runs.get(value);
            return count == null ? 0 : count.get();
        }
    }

    /** The run's input topic, {@code test.topic}, for each application above. */
    @Configuration
    static class TestTopic {
        @Bean
        NewTopic topic(Environment environment) {
            return new NewTopic(environment.getRequiredProperty("test.topic"), 1, (short) 1);
        }
    }

    /** The fix the refusal names: Kafka's transaction manager with synchronization on. */
    @Configuration
    static class Synchronized {
        @Bean
        static BeanPostProcessor synchronizeKafkaTransactions() {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String name) {
                    if (bean instanceof KafkaTransactionManager<?, ?> manager) {
                        manager.setTransactionSynchronization(AbstractPlatformTransactionManager.SYNCHRONIZATION_ALWAYS);
                    }
                    return bean;
                }
            };
        }
    }
}
