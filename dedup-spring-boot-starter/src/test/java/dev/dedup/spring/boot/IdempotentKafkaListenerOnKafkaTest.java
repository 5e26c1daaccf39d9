package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link Idempotent} on a {@code @KafkaListener} method, on the real broker and PostgreSQL: records published again
 * under the same {@code message-id} take effect once, and a listener failure is retried by Spring Kafka's error
 * handler and takes effect once.
 */
@SpringBootTest(classes = IdempotentKafkaListenerOnKafkaTest.App.class,
        properties = {"dedup.store.create-schema=true", "spring.kafka.consumer.auto-offset-reset=earliest"})
class IdempotentKafkaListenerOnKafkaTest {
    static final String TOPIC = Servers.unique("boot-listener");

    @DynamicPropertySource
    static void servers(DynamicPropertyRegistry registry) {
        registry.add("spring.kafka.bootstrap-servers", Servers::kafkaBootstrap);
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.namespace", () -> Servers.unique("boot-kafka"));
        registry.add("test.topic", () -> TOPIC);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        NewTopic topic() {
            return new NewTopic(TOPIC, 1, (short) 1);
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
        @Idempotent(key = "new String(#record.headers().lastHeader('message-id').value())")
        public void on(ConsumerRecord<String, String> record) {
            shipments.ship(record.value());
        }
    }

    @Autowired
    KafkaTemplate<String, String> kafka;

    @Autowired
    Listener listener;

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

    private void send(String messageId, String body) throws Exception {
        var record = new ProducerRecord<String, String>(TOPIC, body);
        record.headers().add("message-id", messageId.getBytes(StandardCharsets.UTF_8));
        kafka.send(record).get();
    }
}
