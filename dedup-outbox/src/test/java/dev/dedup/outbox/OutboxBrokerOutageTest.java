package dev.dedup.outbox;

import static dev.dedup.outbox.OutboxTestSupport.unique;
import static dev.dedup.outbox.OutboxTestSupport.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.outbox.kafka.KafkaOutboxPublisher;
import dev.dedup.outbox.rabbitmq.RabbitOutboxPublisher;
import dev.dedup.rabbitmq.ConfirmedPublisher;
import dev.dedup.tck.FaultProxy;
import dev.dedup.tck.ServerOutages;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The broker unavailable for 5 s while the service keeps committing: events accumulate in the outbox and drain once
 * the broker is back, none lost. RabbitMQ's outage is made at the network (the tck's proxy cuts and refuses the
 * relay's connections), as the machine's broker may not be the harness's; Kafka's broker is stopped and started again
 * through the harness ({@code scripts/test-servers.sh pause|resume kafka}).
 */
class OutboxBrokerOutageTest {
    private static final int EVENTS = 1_000;

    @Test
    @DisplayName("RabbitMQ unreachable for 5 s: events accumulate, then drain; every event published, none lost")
    void eventsAccumulateAndDrain() throws Exception {
        URI rabbit = URI.create(OutboxTestSupport.rabbitUrl());
        String queue = unique("outbox_outage");
        try (HikariDataSource pool = OutboxTestSupport.pool(4);
                FaultProxy proxy = FaultProxy.start(rabbit.getHost(), rabbit.getPort() == -1 ? 5672 : rabbit.getPort());
                com.rabbitmq.client.Connection direct = OutboxTestSupport.rabbitFactory().newConnection("outage-check")) {
            Outbox outbox = Outbox.builder(pool).table(unique("outbox")).build();
            outbox.createSchema();
            Channel check = direct.createChannel();
            check.queueDeclare(queue, false, false, false, null);
            ConnectionFactory throughProxy = OutboxTestSupport.rabbitFactory();
            throughProxy.setHost(proxy.host());
            throughProxy.setPort(proxy.port());
            throughProxy.setAutomaticRecoveryEnabled(true);
            throughProxy.setNetworkRecoveryInterval(200);
            try (com.rabbitmq.client.Connection relayConnection = throughProxy.newConnection("outbox-relay");
                    ConfirmedPublisher confirmed = ConfirmedPublisher.open(relayConnection, Duration.ofSeconds(2));
                    OutboxRelay relay = OutboxRelay.builder(outbox, new RabbitOutboxPublisher(confirmed))
                            .pollInterval(Duration.ofMillis(20)).maxBackoff(Duration.ofMillis(500))
                            .maxAttempts(1).build()) {      // one counted attempt would park an event
                relay.start();
                long pendingAtReturn = -1;
                long outageStarted = 0;
                long healedAt = 0;
                long publishedAtReturn = 0;
                long recoveryMillis = -1;
                for (int i = 0; i < EVENTS; i++) {
                    try (Connection tx = pool.getConnection()) {
                        tx.setAutoCommit(false);
                        outbox.append(tx, "", queue, utf8("event " + i), Map.of());
                        tx.commit();
                    }
                    if (i == EVENTS / 4) {
                        proxy.refuseConnections(true);
                        proxy.cutConnections();
                        outageStarted = System.nanoTime();
                    }
                    if (outageStarted != 0 && pendingAtReturn < 0
                            && System.nanoTime() - outageStarted >= TimeUnit.SECONDS.toNanos(5)) {
                        pendingAtReturn = outbox.pendingCount();
                        publishedAtReturn = relay.publishedCount();
                        proxy.heal();
                        healedAt = System.nanoTime();
                    }
                    if (healedAt != 0 && recoveryMillis < 0 && relay.publishedCount() > publishedAtReturn) {
                        recoveryMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - healedAt);
                    }
                    Thread.sleep(8);
                }
                assertThat(healedAt).as("the outage ended while the service was committing").isPositive();
                long finished = System.nanoTime();
                while (outbox.pendingCount() > 0 && System.nanoTime() - finished < TimeUnit.SECONDS.toNanos(30)) {
                    Thread.sleep(20);
                }
                Set<String> ids = new HashSet<>();
                int messages = 0;
                for (GetResponse message; (message = check.basicGet(queue, true)) != null; ) {
                    messages++;
                    ids.add(message.getProps().getMessageId());
                }
                System.out.printf("outbox, RabbitMQ unreachable 5 s: %d events pending when it came back, publishing"
                                + " again %d ms after; %d messages, %d distinct, %d batches failed%n", pendingAtReturn,
                        recoveryMillis, messages, ids.size(), relay.publishErrors());
                assertThat(pendingAtReturn).as("events accumulated during the outage").isGreaterThan(100);
                assertThat(relay.publishErrors()).as("publishes the outage failed").isPositive();
                assertThat(recoveryMillis).as("ms from the broker's return to the next publish").isBetween(0L, 5_000L);
                assertThat(outbox.pendingCount()).as("drained").isZero();
                assertThat(relay.parkedEvents()).as("an outage is no event's fault: none parked").isZero();
                assertThat(outbox.parkedCount()).isZero();
                assertThat(ids).as("every event published").hasSize(EVENTS);
            } finally {
                check.queueDelete(queue);
                outbox.dropSchema(null);
            }
        }
    }

    @Test
    @DisplayName("Kafka stopped for 5 s: events accumulate, publish errors counted, then drain; none lost, each key in"
            + " order, only failed batches republished")
    void kafkaStoppedEventsAccumulateAndDrain() throws Exception {
        String topic = OutboxTestSupport.createTopic("outbox-outage", 3);
        try (HikariDataSource pool = OutboxTestSupport.pool(4)) {
            Outbox outbox = Outbox.builder(pool).table(unique("outbox")).build();
            outbox.createSchema();
            Writer writer = new Writer(pool, outbox, topic);
            // Acknowledgements awaited 2 s: a batch sent into the outage fails and is republished after it.
            Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    OutboxTestSupport.kafkaBootstrap(), ProducerConfig.LINGER_MS_CONFIG, 2,
                    ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 1_000, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 2_000);
            Set<String> unconfirmed = ConcurrentHashMap.newKeySet();
            try (KafkaOutboxPublisher kafka = KafkaOutboxPublisher.create(config, Duration.ofSeconds(2));
                    OutboxRelay relay = OutboxRelay.builder(outbox, recordingFailures(kafka, unconfirmed))
                            .pollInterval(Duration.ofMillis(20)).maxBackoff(Duration.ofMillis(500))
                            .maxAttempts(1).build()) {      // one counted attempt would park an event
                relay.start();
                Thread writing = new Thread(writer, "service");
                writing.start();
                long pendingInOutage;
                long errorsInOutage;
                long resumeMillis;
                Thread.sleep(1_000);
                long publishedBefore = relay.publishedCount();
                try {
                    ServerOutages.pause("kafka");
                    Thread.sleep(5_000);
                    pendingInOutage = outbox.pendingCount();
                    errorsInOutage = relay.publishErrors();
                } finally {
                    long resuming = System.nanoTime();
                    ServerOutages.resume("kafka");
                    resumeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - resuming);
                }
                Thread.sleep(1_000);
                writer.stop();
                writing.join(10_000);
                long finished = System.nanoTime();
                while (outbox.pendingCount() > 0 && System.nanoTime() - finished < TimeUnit.SECONDS.toNanos(60)) {
                    Thread.sleep(50);
                }
                List<ConsumerRecord<String, byte[]>> records = OutboxTestSupport.readAll(topic, writer.appended.size(),
                        Duration.ofSeconds(1));
                Map<String, Integer> copies = new HashMap<>();
                Map<String, List<Integer>> firstByKey = new HashMap<>();
                for (ConsumerRecord<String, byte[]> record : records) {
                    if (copies.merge(OutboxTestSupport.header(record, "message-id"), 1, Integer::sum) == 1) {
                        firstByKey.computeIfAbsent(record.key(), key -> new ArrayList<>())
                                .add(Integer.parseInt(new String(record.value(), StandardCharsets.UTF_8)));
                    }
                }
                Set<String> twice = new HashSet<>();
                copies.forEach((id, count) -> {
                    if (count > 1) {
                        twice.add(id);
                    }
                });
                System.out.printf("outbox, Kafka stopped 5 s: %d events published before, %d pending and %d batches"
                                + " failed during the outage, resume took %d ms; %d events appended, %d records, %d"
                                + " distinct, %d published twice (all from failed batches: %s)%n", publishedBefore,
                        pendingInOutage, errorsInOutage, resumeMillis, writer.appended.size(), records.size(),
                        copies.size(), twice.size(), unconfirmed.containsAll(twice));
                assertThat(writer.failure.get()).as("service failure").isNull();
                assertThat(publishedBefore).as("published before the outage").isPositive();
                assertThat(pendingInOutage).as("events accumulated during the outage").isPositive();
                assertThat(errorsInOutage).as("publishes the outage failed, counted by the relay").isPositive();
                assertThat(outbox.pendingCount()).as("drained").isZero();
                assertThat(relay.parkedEvents()).as("an outage is no event's fault: none parked").isZero();
                assertThat(outbox.parkedCount()).isZero();
                assertThat(copies.keySet()).as("every event published, none lost")
                        .containsExactlyInAnyOrderElementsOf(writer.appended);
                assertThat(unconfirmed).as("only events of failed batches published twice").containsAll(twice);
                firstByKey.forEach((key, events) -> assertThat(events).as("key " + key).isSorted());
            } finally {
                writer.stop();
                outbox.dropSchema(null);
            }
        }
    }

    /** Notes the events of each batch the broker did not confirm: the only ones the relay may publish twice. */
    private static OutboxPublisher recordingFailures(OutboxPublisher publisher, Set<String> unconfirmed) {
        return events -> {
            try {
                publisher.publish(events);
            } catch (OutboxPublishException e) {
                events.stream().map(OutboxEvent::messageId).filter(id -> !e.confirmed().contains(id))
                        .forEach(unconfirmed::add);
                throw e;
            }
        };
    }

    /** The service: appends an event every 10 ms, each in its own transaction, keys k0..k9, until stopped. */
    private static final class Writer implements Runnable {
        final List<String> appended = Collections.synchronizedList(new ArrayList<>());
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final HikariDataSource pool;
        private final Outbox outbox;
        private final String topic;
        private volatile boolean running = true;

        Writer(HikariDataSource pool, Outbox outbox, String topic) {
            this.pool = pool;
            this.outbox = outbox;
            this.topic = topic;
        }

        void stop() {
            running = false;
        }

        @Override
        public void run() {
            try {
                for (int i = 0; running; i++) {
                    try (Connection tx = pool.getConnection()) {
                        tx.setAutoCommit(false);
                        String id = outbox.append(tx, topic, "k" + i % 10, utf8(Integer.toString(i)), Map.of());
                        tx.commit();
                        appended.add(id);
                    }
                    Thread.sleep(10);
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        }
    }
}
