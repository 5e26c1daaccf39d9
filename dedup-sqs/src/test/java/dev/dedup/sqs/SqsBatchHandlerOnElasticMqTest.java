package dev.dedup.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.KeyRecord;
import dev.dedup.ResultCodec;
import dev.dedup.memory.InMemoryDedupStore;
import dev.dedup.store.postgres.PostgresDedupStore;
import dev.dedup.tck.TestServers;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

/**
 * The Lambda-style batch handler on ElasticMQ (an SQS-compatible server, not Amazon SQS), the test standing in for the
 * event source mapping: it receives a batch, hands it over as an {@link SqsEvent}, and deletes every message the
 * response does not name, as Lambda does with {@code ReportBatchItemFailures}.
 */
class SqsBatchHandlerOnElasticMqTest {

    /** One invocation as the event source runs it: returns the response, after deleting what it does not name. */
    private static SqsBatchResponse invoke(SqsFixture fixture, SqsBatchHandler<String> handler, Duration remaining,
            dev.dedup.MessageHandler<Message, String> work) {
        List<Message> received = new ArrayList<>();
        long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (received.isEmpty() && System.nanoTime() < end) {
            received = fixture.sqs.receiveMessage(b -> b.queueUrl(fixture.queue).maxNumberOfMessages(10)
                    .waitTimeSeconds(1).visibilityTimeout(1)
                    .messageSystemAttributeNames(MessageSystemAttributeName.ALL).messageAttributeNames("All"))
                    .messages();
        }
        String arn = ElasticMq.arnOf(fixture.sqs, fixture.queue);
        List<SqsEvent.SqsMessage> records = new ArrayList<>();
        for (Message message : received) {
            Map<String, String> attributes = new HashMap<>();
            message.messageAttributes().forEach((name, value) -> attributes.put(name, value.stringValue()));
            records.add(new SqsEvent.SqsMessage(message.messageId(), message.receiptHandle(), message.body(),
                    message.attributesAsStrings(), attributes, arn));
        }
        SqsBatchResponse response = handler.handle(new SqsEvent(records), remaining, work);
        List<String> failed = response.batchItemFailures().stream()
                .map(SqsBatchResponse.BatchItemFailure::itemIdentifier).toList();
        for (Message message : received) {
            if (!failed.contains(message.messageId())) {
                fixture.sqs.deleteMessage(b -> b.queueUrl(fixture.queue).receiptHandle(message.receiptHandle()));
            }
        }
        return response;
    }

    private static List<String> failedBodies(SqsBatchResponse response, Map<String, String> bodyOfId) {
        return response.batchItemFailures().stream().map(item -> bodyOfId.get(item.itemIdentifier())).toList();
    }

    @Test
    @DisplayName("the response names the retryable and the final failures only; the final one is redriven at maxReceiveCount")
    void responseNamesOnlyTheMessagesThatMustNotBeDeleted() {
        try (SqsFixture fixture = SqsFixture.standard(2); InMemoryDedupStore store = new InMemoryDedupStore()) {
            SqsBatchHandler<String> handler = SqsBatchHandler.builder(store, ResultCodec.utf8())
                    .keys(SqsKeys.messageAttribute(SqsFixture.KEY_ATTRIBUTE))
                    .keepKeyOn(e -> e instanceof IllegalArgumentException)
                    .build();
            Map<String, String> bodyOfId = new HashMap<>();
            bodyOfId.put(fixture.send("k1", "ok"), "ok");
            bodyOfId.put(fixture.send("k2", "transient"), "transient");
            bodyOfId.put(fixture.send("k3", "unknown sku"), "unknown sku");
            AtomicInteger transientRuns = new AtomicInteger();
            dev.dedup.MessageHandler<Message, String> work = message -> switch (message.body()) {
                case "transient" -> {
                    if (transientRuns.incrementAndGet() == 1) {
                        throw new IllegalStateException("timeout");
                    }
                    yield "ok";
                }
                case "unknown sku" -> throw new IllegalArgumentException("unknown SKU");
                default -> "ok";
            };

            List<String> first = new ArrayList<>();
            long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (first.size() < 2 && System.nanoTime() < end) {  // ElasticMQ may split the three over receives
                first.addAll(failedBodies(invoke(fixture, handler, Duration.ofSeconds(30), work), bodyOfId));
            }
            bodyOfId.put(fixture.send("k1", "ok again"), "ok again");     // a second send of k1: AlreadyProcessed
            List<String> second = new ArrayList<>();
            end = System.nanoTime() + Duration.ofSeconds(8).toNanos();
            while (fixture.onQueue() > 0 && System.nanoTime() < end) {
                second.addAll(failedBodies(invoke(fixture, handler, Duration.ofSeconds(30), work), bodyOfId));
            }

            assertThat(first).containsExactlyInAnyOrder("transient", "unknown sku");
            assertThat(second).as("AlreadyFailed keeps coming back for the redrive; the rest are deleted")
                    .containsOnly("unknown sku");
            assertThat(transientRuns).hasValue(2);
            assertThat(fixture.deadLetters(Duration.ofSeconds(3))).singleElement()
                    .extracting(Message::body).isEqualTo("unknown sku");
        }
    }

    @Test
    @DisplayName("FIFO: a failure names its message and the rest of its group; another group's messages are deleted")
    void fifoGroupStopsAtItsFailure() {
        try (SqsFixture fixture = SqsFixture.fifo(5); InMemoryDedupStore store = new InMemoryDedupStore()) {
            SqsBatchHandler<String> handler = SqsBatchHandler.builder(store, ResultCodec.utf8()).build();
            Map<String, String> bodyOfId = new HashMap<>();
            for (String body : List.of("a1", "b1", "a2", "b2", "a3")) {
                bodyOfId.put(fixture.sendToGroup(body.substring(0, 1), body), body);
            }
            List<String> runs = new ArrayList<>();

            SqsBatchResponse response = invoke(fixture, handler, Duration.ofSeconds(30), message -> {
                runs.add(message.body());
                if (message.body().equals("a2")) {
                    throw new IllegalStateException("transient");
                }
                return "ok";
            });

            assertThat(runs).hasSize(bodyOfId.size() - 1).doesNotContain("a3");
            assertThat(failedBodies(response, bodyOfId)).containsExactly("a2", "a3");
        }
    }

    @Test
    @DisplayName("the remaining time bounds the lease: a function stopped at its timeout leaves no claim behind (PostgreSQL)")
    void remainingTimeBoundsTheLease() throws Exception {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(TestServers.require("PostgreSQL 15", "DEDUP_TEST_POSTGRES_URL", null));
        String table = "sqs_lambda_" + Long.toHexString(System.nanoTime());
        try (SqsFixture fixture = SqsFixture.standard(5);
                PostgresDedupStore store = PostgresDedupStore.builder(dataSource).table(table).namespace("lambda")
                        .createSchema(true).build()) {
            SqsBatchHandler<String> handler = SqsBatchHandler.builder(store, ResultCodec.utf8())
                    .lease(Duration.ofSeconds(3)).build();
            String id = fixture.send("k", "body");
            CountDownLatch running = new CountDownLatch(1);
            CountDownLatch never = new CountDownLatch(1);
            Instant invoked = Instant.now();
            // The first invocation's function hangs past its 2 s: Lambda would stop it there, without a release.
            Thread frozen = new Thread(() -> {
                try {
                    invoke(fixture, handler, Duration.ofSeconds(2), message -> {
                        running.countDown();
                        never.await();
                        return "never";
                    });
                } catch (RuntimeException afterTheTest) {
                    // Thawed at the end, its delete may find the message gone.
                }
            });
            frozen.setDaemon(true);
            frozen.start();
            running.await();
            Instant expiresAt = store.inspect(id).orElseThrow().expiresAt();
            Thread.sleep(2300);     // past the first heartbeat (a third of the lease): each renewal is bounded too
            Optional<KeyRecord> afterTheTimeout = store.inspect(id);

            List<String> ran = new ArrayList<>();
            SqsBatchResponse retry = invoke(fixture, handler, Duration.ofSeconds(30), message -> {
                ran.add(message.body());
                return "done";
            });

            assertThat(expiresAt).as("the claim's expiry, with a 3 s lease and 2 s left")
                    .isBefore(invoked.plusMillis(2500));
            assertThat(afterTheTimeout).as("the claim after the invocation's end, heartbeats included").isEmpty();
            assertThat(retry.batchItemFailures()).as("the redelivery after the timeout is not held off").isEmpty();
            assertThat(ran).containsExactly("body");
            never.countDown();
            frozen.join(5000);
        } finally {
            try (Connection connection = dataSource.getConnection(); Statement statement =
                    connection.createStatement()) {
                statement.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }
}
