package dev.dedup.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.ResultCodec;
import dev.dedup.memory.InMemoryDedupStore;
import dev.dedup.sqs.MessageOutcome.Disposition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequest;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;

/**
 * A delete that fails after the effect is recorded, injected by an SDK interceptor into the calls to ElasticMQ (an
 * SQS-compatible server, not Amazon SQS): sent again with the next poll, and the message never runs twice.
 */
class DeleteRetryOnElasticMqTest {
    /** Fails the next {@code failRequests} DeleteMessageBatch calls, and garbles the first entry of the next
     * {@code garbleEntries} ones (SQS then fails that entry alone). */
    static final class FailingDeletes implements ExecutionInterceptor {
        final AtomicInteger failRequests = new AtomicInteger();
        final AtomicInteger garbleEntries = new AtomicInteger();
        final AtomicInteger deleteCalls = new AtomicInteger();

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (context.request() instanceof DeleteMessageBatchRequest) {
                deleteCalls.incrementAndGet();
                if (failRequests.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    throw SdkClientException.create("injected: the connection dropped before DeleteMessageBatch");
                }
            }
        }

        @Override
        public SdkRequest modifyRequest(Context.ModifyRequest context, ExecutionAttributes attributes) {
            if (context.request() instanceof DeleteMessageBatchRequest request
                    && garbleEntries.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                List<DeleteMessageBatchRequestEntry> entries = new ArrayList<>(request.entries());
                entries.set(0, entries.get(0).toBuilder().receiptHandle("garbled").build());
                return request.toBuilder().entries(entries).build();
            }
            return context.request();
        }
    }

    private final FailingDeletes faults = new FailingDeletes();

    /** Polls until the first batch comes; returns it. */
    private static List<MessageOutcome<String>> firstBatch(SqsMessageProcessor<String> processor, List<String> ran) {
        long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        List<MessageOutcome<String>> outcomes = List.of();
        while (outcomes.isEmpty() && System.nanoTime() < end) {
            outcomes = processor.poll(Duration.ofSeconds(1), message -> {
                ran.add(message.body());
                return "ok";
            });
        }
        return outcomes;
    }

    /** Polls until {@code ran} holds {@code count} bodies, or a few seconds passed. */
    private static void runAll(SqsMessageProcessor<String> processor, List<String> ran, int count) {
        long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (ran.size() < count && System.nanoTime() < end) {
            processor.poll(Duration.ofSeconds(1), message -> {
                ran.add(message.body());
                return "ok";
            });
        }
    }

    /** What a run of {@link #withFault} saw. */
    record Seen(List<MessageOutcome<String>> first, int pendingAfterTheFault, int pendingAtTheEnd,
            List<MessageOutcome<String>> later, List<String> ran, int onQueue) {}

    /**
     * Sends {@code messages}, injects the fault, polls until all ran, then once more, waits past the visibility
     * timeout (an undeleted message would be visible again) and polls again.
     */
    private Seen withFault(int messages, Runnable inject) throws Exception {
        try (SqsFixture fixture = SqsFixture.standard(5,
                ClientOverrideConfiguration.builder().addExecutionInterceptor(faults).build());
                InMemoryDedupStore store = new InMemoryDedupStore();
                SqsMessageProcessor<String> processor = SqsMessageProcessor.builder(fixture.sqs, fixture.queue,
                        store, ResultCodec.utf8()).visibilityTimeout(Duration.ofSeconds(1)).build()) {
            for (int i = 0; i < messages; i++) {
                fixture.send("k" + i, "body" + i);
            }
            inject.run();
            List<String> ran = new ArrayList<>();

            List<MessageOutcome<String>> first = firstBatch(processor, ran);
            int pendingAfterTheFault = processor.pendingDeletes();
            runAll(processor, ran, messages);
            processor.poll(Duration.ZERO, message -> "unexpected");
            Thread.sleep(1500);
            List<MessageOutcome<String>> later = processor.poll(Duration.ofSeconds(1), message -> "unexpected");
            return new Seen(first, pendingAfterTheFault, processor.pendingDeletes(), later, ran, fixture.onQueue());
        }
    }

    @Test
    @DisplayName("a DeleteMessageBatch that fails is sent again with the next poll; the message does not come back")
    void failedDeleteIsRetriedWithTheNextPoll() throws Exception {
        Seen seen = withFault(2, () -> faults.failRequests.set(1));

        assertThat(seen.first()).extracting(MessageOutcome::disposition).containsOnly(Disposition.DONE);
        assertThat(seen.pendingAfterTheFault()).as("deletes kept after the failed request")
                .isEqualTo(seen.first().size());
        assertThat(seen.pendingAtTheEnd()).isZero();
        assertThat(seen.later()).as("received again after the retried delete").isEmpty();
        assertThat(seen.ran()).containsExactlyInAnyOrder("body0", "body1");
        assertThat(seen.onQueue()).isZero();
    }

    @Test
    @DisplayName("one entry of a DeleteMessageBatch that fails is sent again alone; the others are not")
    void partialDeleteFailureIsRetried() throws Exception {
        Seen seen = withFault(3, () -> faults.garbleEntries.set(1));

        assertThat(seen.first()).isNotEmpty();
        assertThat(seen.pendingAfterTheFault()).as("the garbled entry's delete, kept").isEqualTo(1);
        assertThat(seen.pendingAtTheEnd()).isZero();
        assertThat(seen.later()).isEmpty();
        assertThat(seen.ran()).hasSize(3);
        assertThat(seen.onQueue()).isZero();
    }
}
