package dev.dedup.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.ResultCodec;
import dev.dedup.memory.InMemoryDedupStore;
import dev.dedup.sqs.MessageOutcome.Disposition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.Message;

/** FIFO queues on ElasticMQ (an SQS-compatible server, not Amazon SQS): each message group keeps its order. */
class FifoOrderOnElasticMqTest {

    @Test
    @DisplayName("a failure stops its message group at that message; the group comes back in order, other groups go on")
    void groupStopsAtItsFirstFailure() {
        try (SqsFixture fixture = SqsFixture.fifo(5);
                InMemoryDedupStore store = new InMemoryDedupStore();
                SqsMessageProcessor<Void> processor = SqsMessageProcessor.builder(fixture.sqs, fixture.queue, store,
                        ResultCodec.none()).retryBackoff(Duration.ofSeconds(1), Duration.ofSeconds(1)).build()) {
            for (String body : List.of("a1", "b1", "a2", "a3", "b2")) {
                fixture.sendToGroup(body.substring(0, 1), body);
            }
            Set<String> failOnce = ConcurrentHashMap.newKeySet();
            failOnce.add("a2");
            List<String> runs = new ArrayList<>();
            List<String> done = new ArrayList<>();
            List<MessageOutcome<Void>> firstBatch = null;

            long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (done.size() < 5 && System.nanoTime() < end) {
                List<MessageOutcome<Void>> outcomes = processor.poll(Duration.ofSeconds(1), (Message message) -> {
                    runs.add(message.body());
                    if (failOnce.remove(message.body())) {
                        throw new IllegalStateException("transient");
                    }
                    return null;
                });
                if (firstBatch == null && !outcomes.isEmpty()) {
                    firstBatch = outcomes;
                }
                outcomes.stream().filter(outcome -> outcome.disposition() == Disposition.DONE)
                        .forEach(outcome -> done.add(outcome.message().body()));
            }

            assertThat(done).containsExactlyInAnyOrder("a1", "a2", "a3", "b1", "b2");
            assertThat(runs.stream().filter(body -> body.startsWith("a")))
                    .as("group a: a3 never ran before a2 succeeded").containsExactly("a1", "a2", "a2", "a3");
            assertThat(runs.stream().filter(body -> body.startsWith("b"))).containsExactly("b1", "b2");
            assertThat(firstBatch).as("the first batch, if it held all five")
                    .satisfiesAnyOf(batch -> assertThat(batch).hasSizeLessThan(5), batch -> assertThat(batch)
                            .filteredOn(outcome -> outcome.message().body().equals("a3")).singleElement()
                            .satisfies(a3 -> {
                                assertThat(a3.outcome()).as("a3 not run behind the failed a2").isEmpty();
                                assertThat(a3.disposition()).isEqualTo(Disposition.RETRY);
                            }));
            assertThat(fixture.onQueue()).isZero();
        }
    }
}
