package dev.dedup.examples.readme;

import dev.dedup.DedupStore;
import dev.dedup.ResultCodec;
import dev.dedup.kafka.DeadLetterTopic;
import dev.dedup.kafka.KafkaRecordProcessor;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** The README's Kafka poll loop, compiled. */
final class KafkaSetup {
    interface Inventory {
        void reserve(String order);
    }

    private volatile boolean running = true;

    void consume(String bootstrap, DedupStore store, Inventory inventory) {
        // readme:kafka-poll
        Map<String, Object> settings = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, "reservations",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);    // the processor commits, and only what is safe
        try (var consumer = new KafkaConsumer<>(settings, new StringDeserializer(), new StringDeserializer());
                var producer = new KafkaProducer<>(Map.<String, Object>of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        bootstrap), new StringSerializer(), new StringSerializer())) {
            KafkaRecordProcessor<String, String, Void> processor = KafkaRecordProcessor
                    .builder(consumer, store, ResultCodec.none())    // keys: the producer's message-id header
                    .lease(Duration.ofSeconds(30))                    // longer than the slowest handler
                    .deadLetters(new DeadLetterTopic<>(producer))     // records that can never take effect
                    .build();
            consumer.subscribe(List.of("orders"));
            while (running) {
                // One claimAll per partition batch; commits up to the first record that must come again.
                processor.poll(Duration.ofMillis(500), record -> {
                    inventory.reserve(record.value());                // once per message-id
                    return null;
                });
            }
        }
        // end
    }
}
