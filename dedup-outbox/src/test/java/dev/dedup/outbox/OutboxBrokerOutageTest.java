package dev.dedup.outbox;

import static dev.dedup.outbox.OutboxTestSupport.unique;
import static dev.dedup.outbox.OutboxTestSupport.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.outbox.rabbitmq.RabbitOutboxPublisher;
import dev.dedup.rabbitmq.ConfirmedPublisher;
import dev.dedup.tck.FaultProxy;
import java.net.URI;
import java.sql.Connection;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The broker unreachable for 5 s while the service keeps committing: events accumulate in the outbox and drain once
 * the broker is back, none lost. The outage is made at the network (the tck's proxy cuts and refuses the relay's
 * connections), not by stopping the shared broker.
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
                            .pollInterval(Duration.ofMillis(20)).maxBackoff(Duration.ofMillis(500)).build()) {
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
                assertThat(ids).as("every event published").hasSize(EVENTS);
            } finally {
                check.queueDelete(queue);
                outbox.dropSchema(null);
            }
        }
    }
}
