package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link Idempotent} on a {@code @KafkaListener} method, on the real broker and PostgreSQL: records published again
 * under the same {@code message-id} take effect once, a listener failure is retried by the starter's error handler
 * and takes effect once, and a record whose key another consumer holds waits for it, never skipped.
 */
@SpringBootTest(classes = IdempotentKafkaListenerOnKafkaTest.App.class,
        properties = {"dedup.store.create-schema=true", "spring.kafka.consumer.auto-offset-reset=earliest",
                "test.topic=${test.run-topic}"})
class IdempotentKafkaListenerOnKafkaTest {
    static final String TOPIC = Servers.unique("boot-listener");

    /**
     * The listener's topic and group are {@code test.topic}: this run's topic here; a mutant application's its own,
     * as this one's may still be consuming (Spring keeps its context for reuse).
     */
    @DynamicPropertySource
    static void servers(DynamicPropertyRegistry registry) {
        registry.add("spring.kafka.bootstrap-servers", Servers::kafkaBootstrap);
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.namespace", () -> Servers.unique("boot-kafka"));
        registry.add("test.run-topic", () -> TOPIC);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        NewTopic topic(@Value("${test.topic}") String topic) {
            return new NewTopic(topic, 1, (short) 1);
        }

        @Bean
        Listener listener() {
            return new Listener();
        }
    }

    static class Listener {
        private final Shipments shipments = new Shipments();

        /** Through a method: the bean is a proxy, whose own fields are empty. */
        public Shipments shipments() {
            return shipments;
        }

        @KafkaListener(topics = "${test.topic}", groupId = "${test.topic}")
        @Idempotent(key = "new String(#record.headers().lastHeader('message-id').value())", scope = "shipments")
        public void on(ConsumerRecord<String, String> record) {
            shipments.ship(record.value());
        }
    }

    @Autowired
    KafkaTemplate<String, String> kafka;

    @Autowired
    Listener listener;

    @Value("${test.topic}")
    String topic;

    @Test
    void recordsPublishedAgainTakeEffectOnceAndAFailedOneIsRetried() throws Exception {
        send("id-a", "a");
        send("id-b", "b");
        send("id-a", "a");
        send("id-f", "fail-once");
        send("id-b", "b");
        send("id-b", "b");
        send("id-f", "fail-once");
        send("id-end", "end"); // one partition, one consumer: when "end" took effect, every record before it was read

        Shipments shipments = listener.shipments();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (shipments.effects("end") == 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }

        assertThat(shipments.effects("end")).as("the last record took effect").isEqualTo(1);
        assertThat(shipments.effects("a")).isEqualTo(1);
        assertThat(shipments.effects("b")).isEqualTo(1);
        assertThat(shipments.runs("a")).isEqualTo(1);
        assertThat(shipments.runs("b")).isEqualTo(1);
        assertThat(shipments.effects("fail-once")).isEqualTo(1);
        assertThat(shipments.runs("fail-once")).as("the failed first run, and its retry").isEqualTo(2);
    }

    @Autowired
    DedupStore store;

    @Test
    void aRecordWhoseKeyAnotherConsumerHoldsWaitsForItInsteadOfBeingSkipped() throws Exception {
        String id = Servers.unique("held");
        Shipments shipments = listener.shipments();
        send(Servers.unique("warm-up"), "warm-up-" + id);
        awaitEffect(shipments, "warm-up-" + id);   // the listener consumes: the next record is read at once
        Claim holder = (Claim) store.claim("shipments:" + id, Duration.ofSeconds(30));
        send(id, "held-" + id);
        send(Servers.unique("after"), "after-" + id);

        Thread.sleep(6_000);   // Spring Kafka's default handler retries nine times (about 0.5 s apart), then skips
        assertThat(shipments.runs("held-" + id)).as("not while the holder runs").isZero();
        assertThat(shipments.runs("after-" + id)).as("nothing passes the held record").isZero();
        store.release(holder);   // the holder gives up: the next retry claims the key and runs the method

        awaitEffect(shipments, "after-" + id);
        assertThat(shipments.effects("held-" + id)).isEqualTo(1);
        assertThat(shipments.effects("after-" + id)).isEqualTo(1);
    }

    @Test
    void aContainerWithAnotherErrorHandlerIsRefusedAtStartup() {
        assertThatThrownBy(() -> {
            try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class, PlainErrorHandler.class)
                    .web(WebApplicationType.NONE)
                    .run("--spring.kafka.bootstrap-servers=" + Servers.kafkaBootstrap(),
                            "--spring.datasource.url=" + Servers.postgresJdbcUrl(),
                            "--dedup.namespace=" + Servers.unique("boot-kafka-check"),
                            "--test.topic=" + TOPIC + "-check", "--spring.kafka.listener.auto-startup=true")) {
                context.getBean(Listener.class);
            }
        }).hasRootCauseInstanceOf(DedupConfigurationException.class)
                .rootCause().hasMessageContaining("IdempotentKafkaErrorHandler")
                .hasMessageContaining("Listener.on").hasMessageContaining("dedup.kafka.require-error-handler");
    }

    /** An application's own error handler, as Spring Kafka's docs show it. */
    @Configuration
    static class PlainErrorHandler {
        @Bean
        DefaultErrorHandler plain() {
            return new DefaultErrorHandler();
        }
    }

    private static void awaitEffect(Shipments shipments, String body) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (shipments.effects(body) == 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
    }

    private void send(String messageId, String body) throws Exception {
        var record = new ProducerRecord<String, String>(topic, body);
        record.headers().add("message-id", messageId.getBytes(StandardCharsets.UTF_8));
        kafka.send(record).get();
    }
}
