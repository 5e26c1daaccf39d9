package dev.dedup.outbox;

import static dev.dedup.outbox.OutboxTestSupport.unique;
import static dev.dedup.outbox.OutboxTestSupport.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.dedup.outbox.rabbitmq.RabbitOutboxPublisher;
import dev.dedup.rabbitmq.ConfirmedPublisher;
import dev.dedup.rabbitmq.PublishException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The relay publishing to the real RabbitMQ broker with publisher confirms, from PostgreSQL and MariaDB. */
class OutboxRelayOnRabbitMqTest {
    private static final OutboxFixture fixture = new OutboxFixture(4);

    @AfterEach
    void dropOutboxes() {
        fixture.dropOutboxes();
    }

    @AfterAll
    static void disconnect() {
        fixture.close();
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    @DisplayName("unroutable: nothing marked, the error names it; once a queue is bound, published once in order")
    void failureLeavesEventsForLaterThenPublishesInOrder(TestDatabase database) throws Exception {
        Outbox outbox = fixture.outbox(database);
        String exchange = unique("outbox-exchange");
        String queue = unique("outbox-queue");
        try (com.rabbitmq.client.Connection rabbit = OutboxTestSupport.rabbitFactory().newConnection("outbox-test");
                ConfirmedPublisher confirmed = ConfirmedPublisher.open(rabbit, Duration.ofSeconds(10))) {
            Channel channel = rabbit.createChannel();
            channel.exchangeDeclare(exchange, "direct", false, true, null);
            List<String> ids = new ArrayList<>();
            try (Connection tx = fixture.pool(database).getConnection()) {
                tx.setAutoCommit(false);
                for (int i = 0; i < 5; i++) {
                    ids.add(outbox.append(tx, exchange, "orders", utf8("e" + i), Map.of("seq", Integer.toString(i))));
                }
                tx.commit();
            }
            OutboxRelay relay = OutboxRelay.builder(outbox, new RabbitOutboxPublisher(confirmed)).build();

            // No queue bound: the broker returns the first message, so nothing is confirmed and nothing marked.
            assertThatThrownBy(relay::relayOnce).isInstanceOf(OutboxPublishException.class)
                    .hasMessageContaining("did not confirm 5 of 5").hasCauseInstanceOf(PublishException.class)
                    .satisfies(e -> assertThat(((OutboxPublishException) e).confirmed()).isEmpty())
                    .satisfies(e -> assertThat(((OutboxPublishException) e).rejected()).as("returned: its own fault")
                            .containsOnlyKeys(ids.get(0)));
            assertThat(fixture.attempts(outbox, ids.get(0)).attempts()).isEqualTo(1);
            assertThat(outbox.pendingCount()).isEqualTo(5);
            assertThat(relay.publishErrors()).isEqualTo(1);

            channel.queueDeclare(queue, true, false, true, null);
            channel.queueBind(queue, exchange, "orders");
            assertThat(relay.relayOnce()).isEqualTo(5);
            assertThat(outbox.pendingCount()).isZero();
            for (int i = 0; i < 5; i++) {
                GetResponse message = channel.basicGet(queue, true);
                assertThat(message).as("message " + i).isNotNull();
                assertThat(message.getProps().getMessageId()).isEqualTo(ids.get(i));
                assertThat(message.getProps().getDeliveryMode()).isEqualTo(2);
                assertThat(message.getProps().getHeaders().get("seq")).hasToString(Integer.toString(i));
                assertThat(new String(message.getBody(), StandardCharsets.UTF_8)).isEqualTo("e" + i);
            }
            assertThat(channel.basicGet(queue, true)).as("each event once").isNull();
            channel.queueDelete(queue);
            channel.exchangeDelete(exchange);
        }
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    @DisplayName("an event for a missing exchange fails on its own; events beside and after it are published")
    void anEventForAMissingExchangeDoesNotStopTheRelay(TestDatabase database) throws Exception {
        Outbox outbox = fixture.outbox(database);
        String queue = unique("outbox-queue");
        try (com.rabbitmq.client.Connection rabbit = OutboxTestSupport.rabbitFactory().newConnection("outbox-test");
                ConfirmedPublisher confirmed = ConfirmedPublisher.open(rabbit, Duration.ofSeconds(10))) {
            Channel channel = rabbit.createChannel();
            channel.queueDeclare(queue, false, false, true, null);
            OutboxRelay relay = OutboxRelay.builder(outbox, new RabbitOutboxPublisher(confirmed)).build();
            append(outbox, unique("missing-exchange"), "orders", "lost");
            append(outbox, "", queue, "beside");      // the default exchange routes by queue name: the key

            // The broker closes the channel over the first event (404), which fails every publish after it there.
            assertThatThrownBy(relay::relayOnce).isInstanceOf(OutboxPublishException.class)
                    .hasMessageContaining("did not confirm 1 of 2").hasMessageContaining("404 NOT_FOUND")
                    .hasCauseInstanceOf(PublishException.class);
            append(outbox, "", queue, "after");
            assertThatThrownBy(relay::relayOnce).isInstanceOf(OutboxPublishException.class)
                    .hasMessageContaining("did not confirm 1 of 2");

            assertThat(bodies(channel, queue)).containsExactly("beside", "after");
            assertThat(outbox.pendingCount()).as("only the event for the missing exchange").isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    @DisplayName("an event for a missing exchange is parked after maxAttempts, its key's later event then goes out, and"
            + " a replay once the exchange exists publishes it")
    void anEventForAMissingExchangeIsParkedThenReplayed(TestDatabase database) throws Exception {
        Outbox outbox = fixture.outbox(database);
        String exchange = unique("outbox-exchange");
        String missing = unique("missing-exchange");
        String queue = unique("outbox-queue");
        try (com.rabbitmq.client.Connection rabbit = OutboxTestSupport.rabbitFactory().newConnection("outbox-test");
                ConfirmedPublisher confirmed = ConfirmedPublisher.open(rabbit, Duration.ofSeconds(10))) {
            Channel channel = rabbit.createChannel();
            channel.exchangeDeclare(exchange, "direct", false, true, null);
            channel.queueDeclare(queue, false, false, true, null);
            channel.queueBind(queue, exchange, "a");
            channel.queueBind(queue, exchange, "b");
            String poison = append(outbox, missing, "a", "poison");
            append(outbox, exchange, "a", "after");
            append(outbox, exchange, "b", "beside");
            OutboxRelay relay = OutboxRelay.builder(outbox, new RabbitOutboxPublisher(confirmed)).maxAttempts(2)
                    .build();

            for (int attempt = 1; attempt <= 2; attempt++) {
                assertThatThrownBy(relay::relayOnce).isInstanceOf(OutboxPublishException.class)
                        .hasMessageContaining("404 NOT_FOUND").satisfies(e ->
                                assertThat(((OutboxPublishException) e).rejected()).containsOnlyKeys(poison));
                assertThat(fixture.attempts(outbox, poison).attempts()).isEqualTo(attempt);
            }
            OutboxFixture.Attempts parked = fixture.attempts(outbox, poison);
            assertThat(parked.parked()).isTrue();
            assertThat(parked.lastError()).contains("404 NOT_FOUND").contains(missing);
            assertThat(relay.relayOnce()).as("the key's later event, no longer held").isEqualTo(1);
            assertThat(relay.relayOnce()).as("nothing else").isZero();
            assertThat(relay.parkedEvents()).isEqualTo(1);
            assertThat(outbox.parkedCount()).isEqualTo(1);
            assertThat(outbox.pendingCount()).isZero();
            assertThat(bodies(channel, queue)).containsExactly("beside", "after");

            channel.exchangeDeclare(missing, "direct", false, true, null);
            channel.queueBind(queue, missing, "a");
            assertThat(outbox.replayParked()).isEqualTo(1);
            assertThat(relay.relayOnce()).isEqualTo(1);
            assertThat(bodies(channel, queue)).containsExactly("poison");
            assertThat(outbox.parkedCount()).isZero();
            channel.exchangeDelete(missing);
        }
    }

    private static String append(Outbox outbox, String exchange, String key, String body) throws Exception {
        try (Connection tx = outbox.dataSource().getConnection()) {
            tx.setAutoCommit(false);
            String id = outbox.append(tx, exchange, key, utf8(body), Map.of());
            tx.commit();
            return id;
        }
    }

    private static List<String> bodies(Channel channel, String queue) throws Exception {
        List<String> bodies = new ArrayList<>();
        for (GetResponse message = channel.basicGet(queue, true); message != null;
                message = channel.basicGet(queue, true)) {
            bodies.add(new String(message.getBody(), StandardCharsets.UTF_8));
        }
        return bodies;
    }
}
