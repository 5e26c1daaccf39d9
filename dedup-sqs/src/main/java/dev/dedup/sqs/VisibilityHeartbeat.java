package dev.dedup.sqs;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;

/**
 * Keeps a received batch invisible while it is worked on: every third of the visibility timeout, one
 * {@code ChangeMessageVisibilityBatch} sets each message's timeout back to the full length, so no other consumer
 * receives a message whose handler still runs, or that waits for the ones before it, or whose delete is about to be
 * sent. The claims' leases are renewed beside it by the idempotent consumer's own heartbeats.
 */
final class VisibilityHeartbeat implements AutoCloseable {
    private final SqsClient sqs;
    private final String queueUrl;
    /** Each message of the batch with the full visibility timeout. */
    private final Map<Message, Integer> extensions = new LinkedHashMap<>();
    private final ScheduledFuture<?> future;
    private boolean stopped;

    private VisibilityHeartbeat(SqsClient sqs, String queueUrl, List<Message> messages, int visibilitySeconds,
            ScheduledExecutorService timer) {
        this.sqs = sqs;
        this.queueUrl = queueUrl;
        messages.forEach(message -> extensions.put(message, visibilitySeconds));
        long period = Math.max(100, visibilitySeconds * 1000L / 3);
        this.future = timer.scheduleWithFixedDelay(this::tick, period, period, TimeUnit.MILLISECONDS);
    }

    /** Starts extending the visibility of {@code messages} to {@code visibilitySeconds}, every third of it. */
    static VisibilityHeartbeat start(SqsClient sqs, String queueUrl, List<Message> messages, int visibilitySeconds,
            ScheduledExecutorService timer) {
        return new VisibilityHeartbeat(sqs, queueUrl, messages, visibilitySeconds, timer);
    }

    /**
     * Stops extending; waits for a tick in flight, so no extend lands after the caller's own visibility changes.
     */
    @Override
    public synchronized void close() {
        stopped = true;
        future.cancel(false);
    }

    private synchronized void tick() {
        if (!stopped) {
            VisibilityChanges.apply(sqs, queueUrl, extensions, "it may be received again while it is worked on");
        }
    }
}
