package dev.dedup.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The publisher helper on the real broker: ids, confirms, and each typed failure caused for real. */
@Timeout(60)
class ConfirmedPublisherOnRabbitMqTest {
    private static final byte[] BODY = "reserve".getBytes(StandardCharsets.UTF_8);

    private Connection connection;
    private Channel admin;
    private String queue;
    private ConfirmedPublisher publisher;

    @BeforeEach
    void setUp() throws Exception {
        connection = RabbitTestBroker.connect("test-publisher");
        admin = connection.createChannel();
        queue = RabbitTestBroker.unique("published");
        admin.queueDeclare(queue, false, false, false, null);
        publisher = ConfirmedPublisher.open(connection, Duration.ofSeconds(10));
    }

    @AfterEach
    void tearDown() throws Exception {
        publisher.close();
        admin.queueDelete(queue);
        connection.close();
    }

    @Test
    void setsARandomMessageIdWhenNoneIsGivenAndKeepsAGivenOne() throws Exception {
        String generated = publisher.publish("", queue, null, BODY);
        String given = publisher.publish("", queue, new AMQP.BasicProperties.Builder().messageId("order-7")
                .contentType("text/plain").build(), BODY);

        assertThat(generated).matches("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
        assertThat(given).isEqualTo("order-7");
        GetResponse first = admin.basicGet(queue, true);
        GetResponse second = admin.basicGet(queue, true);
        assertThat(first.getProps().getMessageId()).isEqualTo(generated);
        assertThat(second.getProps().getMessageId()).isEqualTo("order-7");
        assertThat(second.getProps().getContentType()).isEqualTo("text/plain");
    }

    @Test
    void concurrentPublishesEachWaitForTheirOwnConfirm() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(4);
        Set<String> ids = ConcurrentHashMap.newKeySet();
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            done.add(threads.submit(() -> {
                for (int i = 0; i < 100; i++) {
                    ids.add(publisher.publish("", queue, null, BODY));
                }
            }));
        }
        for (Future<?> future : done) {
            future.get();
        }
        threads.shutdown();

        assertThat(ids).hasSize(400);
        assertThat(admin.queueDeclarePassive(queue).getMessageCount()).isEqualTo(400);
    }

    @Test
    void asyncPublishesShareTheWaitAndEachSettlesOnItsOwn() throws Exception {
        String full = RabbitTestBroker.unique("full");
        admin.queueDeclare(full, false, false, false, Map.of("x-max-length", 2, "x-overflow", "reject-publish"));
        try {
            List<CompletableFuture<String>> sent = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                sent.add(publisher.publishAsync("", full, new AMQP.BasicProperties.Builder().messageId("m" + i)
                        .build(), ("m" + i).getBytes(StandardCharsets.UTF_8)));
            }

            assertThat(sent.get(0).get()).isEqualTo("m0");
            assertThat(sent.get(1).get()).isEqualTo("m1");
            for (CompletableFuture<String> refused : sent.subList(2, 4)) {
                assertThatThrownBy(refused::get).isInstanceOf(ExecutionException.class).cause()
                        .isInstanceOfSatisfying(PublishException.class,
                                e -> assertThat(e.reason()).isEqualTo(PublishException.Reason.NACKED));
            }
            assertThat(new String(admin.basicGet(full, true).getBody(), StandardCharsets.UTF_8)).isEqualTo("m0");
            assertThat(new String(admin.basicGet(full, true).getBody(), StandardCharsets.UTF_8)).isEqualTo("m1");
        } finally {
            admin.queueDelete(full);
        }
    }

    @Test
    void aMessageNoQueueTakesFailsAsUnroutable() {
        assertThatThrownBy(() -> publisher.publish("amq.direct", RabbitTestBroker.unique("nobody"),
                new AMQP.BasicProperties.Builder().messageId("order-8").build(), BODY))
                .isInstanceOfSatisfying(PublishException.class, e -> {
                    assertThat(e.reason()).isEqualTo(PublishException.Reason.UNROUTABLE);
                    assertThat(e.messageId()).isEqualTo("order-8");
                    assertThat(e).hasMessageContaining("order-8").hasMessageContaining("amq.direct");
                });
        // The publisher still works afterwards.
        assertThat(publisher.publish("", queue, null, BODY)).isNotBlank();
    }

    @Test
    void aMessageTheBrokerRefusesFailsAsNacked() throws Exception {
        String full = RabbitTestBroker.unique("full");
        admin.queueDeclare(full, false, false, false, Map.of("x-max-length", 1, "x-overflow", "reject-publish"));
        try {
            publisher.publish("", full, null, BODY);
            assertThatThrownBy(() -> publisher.publish("", full, null, BODY))
                    .isInstanceOfSatisfying(PublishException.class,
                            e -> assertThat(e.reason()).isEqualTo(PublishException.Reason.NACKED));
        } finally {
            admin.queueDelete(full);
        }
    }

    @Test
    void aChannelClosedByTheBrokerFailsAsChannelClosedAndTheNextPublishGoesOnANewChannel() throws Exception {
        // Publishing to a missing exchange makes the broker close the channel (404) instead of confirming.
        assertThatThrownBy(() -> publisher.publish(RabbitTestBroker.unique("missing"), "anything", null, BODY))
                .isInstanceOfSatisfying(PublishException.class, e -> {
                    assertThat(e.reason()).isEqualTo(PublishException.Reason.CHANNEL_CLOSED);
                    assertThat(e).hasMessageContaining("404");
                    assertThat(e.getMessage()).doesNotContain("guest");
                });
        assertThat(publisher.isOpen()).as("a channel-level error is not the publisher's end").isTrue();

        String id = publisher.publish("", queue, null, BODY);

        GetResponse stored = admin.basicGet(queue, true);
        assertThat(stored.getProps().getMessageId()).isEqualTo(id);
    }

    @Test
    void onARecoveringConnectionTooAChannelLevelErrorIsFollowedByANewChannel() throws Exception {
        ConnectionFactory recovering = RabbitTestBroker.factory();
        recovering.setAutomaticRecoveryEnabled(true);
        try (Connection connection = recovering.newConnection("test-recovering-publisher");
                ConfirmedPublisher onIt = ConfirmedPublisher.open(connection, Duration.ofSeconds(10))) {
            assertThatThrownBy(() -> onIt.publish(RabbitTestBroker.unique("missing"), "anything", null, BODY))
                    .isInstanceOf(PublishException.class);

            String id = onIt.publish("", queue, null, BODY);

            assertThat(admin.basicGet(queue, true).getProps().getMessageId()).isEqualTo(id);
        }
    }

    @Test
    void aPublisherWhoseConnectionClosedStaysClosed() throws Exception {
        connection.close();

        assertThat(publisher.isOpen()).isFalse();
        assertThatThrownBy(() -> publisher.publish("", queue, null, BODY))
                .isInstanceOfSatisfying(PublishException.class,
                        e -> assertThat(e.reason()).isEqualTo(PublishException.Reason.CHANNEL_CLOSED));
        connection = RabbitTestBroker.connect("test-publisher");    // for tearDown
        admin = connection.createChannel();
    }

    @Test
    void badSettingsAreRefused() {
        assertThatThrownBy(() -> ConfirmedPublisher.open(connection, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout");
        assertThatThrownBy(() -> DedupQueues.named("amq.orders")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DedupQueues.named("orders").retryDelay(Duration.ofDays(2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retryDelay");
    }
}
