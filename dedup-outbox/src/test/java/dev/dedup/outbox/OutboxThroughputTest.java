package dev.dedup.outbox;

import static dev.dedup.outbox.OutboxTestSupport.header;
import static dev.dedup.outbox.OutboxTestSupport.unique;
import static dev.dedup.outbox.OutboxTestSupport.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.outbox.kafka.KafkaOutboxPublisher;
import dev.dedup.outbox.rabbitmq.RabbitOutboxPublisher;
import dev.dedup.rabbitmq.ConfirmedPublisher;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * One relay draining a backlog at batch 100, to each broker: every event published exactly once, and the rate
 * printed (the figure in docs/outbox.md; a single timed run, not a JMH benchmark).
 */
class OutboxThroughputTest {
    private static HikariDataSource pool;

    @BeforeAll
    static void connect() {
        pool = OutboxTestSupport.pool(4);
    }

    @AfterAll
    static void disconnect() {
        pool.close();
    }

    @Test
    @DisplayName("Kafka: 10,000 events drained by one relay at batch 100, each exactly once")
    void kafka() throws Exception {
        int events = 10_000;
        String topic = OutboxTestSupport.createTopic("outbox-rate", 3);
        Outbox outbox = backlog(topic, events);
        try (KafkaOutboxPublisher kafka = KafkaOutboxPublisher.create(OutboxTestSupport.producerConfig(),
                Duration.ofSeconds(30))) {
            drain(outbox, kafka, events, "Kafka");
            var records = OutboxTestSupport.readAll(topic, events, Duration.ofSeconds(1));
            assertThat(records).hasSize(events);
            assertThat(records.stream().map(r -> header(r, "message-id")).collect(Collectors.toSet()))
                    .hasSize(events);
        } finally {
            outbox.dropSchema(null);
        }
    }

    @Test
    @DisplayName("RabbitMQ: 2,000 events drained by one relay at batch 100, each exactly once")
    void rabbitMq() throws Exception {
        int events = 2_000;
        String queue = unique("outbox_rate");
        Outbox outbox = backlog("", events, queue);
        try (com.rabbitmq.client.Connection rabbit = OutboxTestSupport.rabbitFactory().newConnection("outbox-rate");
                ConfirmedPublisher confirmed = ConfirmedPublisher.open(rabbit, Duration.ofSeconds(30))) {
            Channel channel = rabbit.createChannel();
            channel.queueDeclare(queue, false, false, false, null);
            drain(outbox, new RabbitOutboxPublisher(confirmed), events, "RabbitMQ");
            assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(events);
            channel.queueDelete(queue);
        } finally {
            outbox.dropSchema(null);
        }
    }

    private static Outbox backlog(String destination, int events) throws Exception {
        return backlog(destination, events, null);
    }

    /** {@code events} committed events; keyed by {@code key}, or by one of 16 keys when it is null. */
    private static Outbox backlog(String destination, int events, String key) throws Exception {
        Outbox outbox = Outbox.builder(pool).table(unique("outbox")).build();
        outbox.createSchema();
        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            for (int i = 0; i < events; i++) {
                outbox.append(tx, destination, key != null ? key : "key-" + i % 16, utf8("event " + i),
                        Map.of("type", "Created"));
            }
            tx.commit();
        }
        return outbox;
    }

    private static void drain(Outbox outbox, OutboxPublisher publisher, int events, String broker) {
        OutboxRelay relay = OutboxRelay.builder(outbox, publisher).batchSize(100).build();
        long started = System.nanoTime();
        int relayed = 0;
        for (int n; (n = relay.relayOnce()) > 0; ) {
            relayed += n;
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf("outbox relay to %s: %d events at batch 100 in %.2f s, %.0f events/s (one relay)%n",
                broker, relayed, seconds, relayed / seconds);
        assertThat(relayed).isEqualTo(events);
        assertThat(outbox.pendingCount()).isZero();
    }
}
