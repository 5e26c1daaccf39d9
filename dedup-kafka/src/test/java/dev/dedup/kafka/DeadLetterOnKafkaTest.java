package dev.dedup.kafka;

import static dev.dedup.kafka.KafkaTestSupport.committed;
import static dev.dedup.kafka.KafkaTestSupport.consumer;
import static dev.dedup.kafka.KafkaTestSupport.createTopic;
import static dev.dedup.kafka.KafkaTestSupport.producer;
import static dev.dedup.kafka.KafkaTestSupport.send;
import static dev.dedup.kafka.KafkaTestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Records that can never take effect go to a real dead-letter topic, and the offset passes them only after that. */
class DeadLetterOnKafkaTest {

    @Test
    @DisplayName("a record without a message-id header is never processed: it goes to <topic>.DLT with the reason")
    void missingHeaderIsDeadLettered() throws Exception {
        String topic = createTopic("no-header", 1);
        try (Admin admin = KafkaTestSupport.admin()) {
            admin.createTopics(List.of(new NewTopic(topic + ".DLT", 1, (short) 1))).all().get();
        }
        List<String> handled = new CopyOnWriteArrayList<>();
        String group = "no-header-" + unique();
        try (DedupStore store = KafkaTestSupport.postgresStore("kafka-dlt-" + unique());
                KafkaProducer<String, String> producer = producer();
                KafkaConsumer<String, String> consumer = consumer(group, 100)) {
            send(producer, topic, 0, "m0", "v0");
            send(producer, topic, 0, null, "keyless");
            send(producer, topic, 0, "m2", "v2");
            consumer.subscribe(List.of(topic));
            var processor = KafkaRecordProcessor.builder(consumer, store, ResultCodec.none())
                    .deadLetters(new DeadLetterTopic<>(producer))
                    .build();

            for (int i = 0; i < 100 && !committed(group, topic).equals(Map.of(0, 3L)); i++) {
                processor.poll(Duration.ofMillis(200), record -> {
                    handled.add(record.value());
                    return null;
                });
            }

            assertThat(handled).containsExactly("v0", "v2");
            assertThat(committed(group, topic)).isEqualTo(Map.of(0, 3L));
            ConsumerRecord<String, String> letter = readOne(topic + ".DLT");
            assertThat(letter.value()).isEqualTo("keyless");
            assertThat(header(letter, DeadLetterTopic.REASON_HEADER)).isEqualTo("NO_KEY");
            assertThat(header(letter, DeadLetterTopic.ERROR_HEADER)).contains("message-id");
            assertThat(header(letter, DeadLetterTopic.ORIGIN_HEADER)).isEqualTo(topic + "-0@1");
        }
    }

    @Test
    @DisplayName("a record reusing a key with another payload fingerprint goes to <topic>.DLT as KEY_REUSED")
    void reusedKeyWithAnotherPayloadIsDeadLettered() throws Exception {
        String topic = createTopic("key-reused", 1);
        try (Admin admin = KafkaTestSupport.admin()) {
            admin.createTopics(List.of(new NewTopic(topic + ".DLT", 1, (short) 1))).all().get();
        }
        List<String> handled = new CopyOnWriteArrayList<>();
        List<ProcessingOutcome<?>> outcomes = new CopyOnWriteArrayList<>();
        String group = "key-reused-" + unique();
        try (DedupStore store = KafkaTestSupport.postgresStore("kafka-reused-" + unique());
                KafkaProducer<String, String> producer = producer();
                KafkaConsumer<String, String> consumer = consumer(group, 100)) {
            send(producer, topic, 0, "m1", "10 EUR");
            send(producer, topic, 0, "m1", "10 EUR");
            send(producer, topic, 0, "m1", "99 EUR");
            send(producer, topic, 0, "m3", "v3");
            consumer.subscribe(List.of(topic));
            var processor = KafkaRecordProcessor.builder(consumer, store, ResultCodec.none())
                    .fingerprint(record -> sha256(record.value()))
                    .onOutcome(outcomes::add)
                    .deadLetters(new DeadLetterTopic<>(producer))
                    .build();

            for (int i = 0; i < 100 && !committed(group, topic).equals(Map.of(0, 4L)); i++) {
                processor.poll(Duration.ofMillis(200), record -> {
                    handled.add(record.value());
                    return null;
                });
            }

            assertThat(handled).containsExactly("10 EUR", "v3");
            assertThat(outcomes).extracting(outcome -> outcome.getClass().getSimpleName())
                    .containsExactly("Processed", "AlreadyProcessed", "KeyReused", "Processed");
            assertThat(committed(group, topic)).isEqualTo(Map.of(0, 4L));
            ConsumerRecord<String, String> letter = readOne(topic + ".DLT");
            assertThat(letter.value()).isEqualTo("99 EUR");
            assertThat(header(letter, DeadLetterTopic.REASON_HEADER)).isEqualTo("KEY_REUSED");
            assertThat(header(letter, DeadLetterTopic.ORIGIN_HEADER)).isEqualTo(topic + "-0@2");
        }
    }

    private static byte[] sha256(String value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ConsumerRecord<String, String> readOne(String topic) {
        try (KafkaConsumer<String, String> reader = consumer("reader-" + unique(), 10)) {
            reader.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> read = new ArrayList<>();
            for (int i = 0; i < 100 && read.isEmpty(); i++) {
                reader.poll(Duration.ofMillis(200)).forEach(read::add);
            }
            assertThat(read).hasSize(1);
            return read.get(0);
        }
    }

    private static String header(ConsumerRecord<?, ?> record, String name) {
        return new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }
}
