package dev.dedup.kafka.example;

import dev.dedup.DedupStore;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.kafka.DeadLetterTopic;
import dev.dedup.kafka.KafkaRecordProcessor;
import dev.dedup.kafka.PollResult;
import dev.dedup.kafka.RecordKeys;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Producer;

/**
 * The poll loop of docs/kafka.md, compiled and run on the real broker by {@code ExampleOnKafkaTest}: reserves stock
 * once per message id, whatever Kafka redelivers.
 */
public final class ReservePollLoop implements Runnable {
    /** The business side effect. */
    public interface Inventory {
        /**
         * Reserves what one order message asks for.
         *
         * @param order the message's value
         * @throws UnknownSkuException when no retry can make the order valid
         */
        void reserve(String order);
    }

    /** A failure that retrying cannot fix: the record goes to the dead letters. */
    public static final class UnknownSkuException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /**
         * An unknown SKU.
         *
         * @param sku the SKU
         */
        public UnknownSkuException(String sku) {
            super("unknown SKU " + sku);
        }
    }

    // kafka-doc:poll-loop
    private final Consumer<String, String> consumer;   // with enable.auto.commit=false
    private final KafkaRecordProcessor<String, String, Void> processor;
    private final Inventory inventory;
    private final String topic;
    private volatile boolean running = true;

    public ReservePollLoop(Consumer<String, String> consumer, Producer<String, String> producer, DedupStore store,
            Inventory inventory, String topic) {
        this.consumer = consumer;
        this.inventory = inventory;
        this.topic = topic;
        this.processor = KafkaRecordProcessor.builder(consumer, store, ResultCodec.none())
                .keys(RecordKeys.header("message-id"))           // the default: the id the producer set
                .lease(Duration.ofSeconds(30))                    // longer than the slowest handler
                .retention(Duration.ofDays(7))                    // longer than the longest replay of the topic
                .keepKeyOn(e -> e instanceof UnknownSkuException) // final: dead letter, then commit past it
                .deadLetters(new DeadLetterTopic<>(producer))     // <topic>.DLT, acknowledged before the commit
                .build();
    }

    @Override
    public void run() {
        consumer.subscribe(List.of(topic));
        while (running) {
            // One claimAll per partition; commits up to the first record that must come again.
            PollResult<String, String, Void> result = processor.poll(Duration.ofMillis(500), record -> {
                inventory.reserve(record.value());        // your side effect: once per message id
                return null;
            });
            if (result.count(ProcessingOutcome.LeaseLost.class) > 0) {
                alert("a handler outlived its lease: lengthen the lease");
            }
        }
    }
    // end

    /** Ends the loop after the current poll. */
    public void stop() {
        running = false;
    }

    private void alert(String message) {
        System.err.println(message);
    }
}
