package dev.dedup.sqs;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;

/**
 * Deletes with {@code DeleteMessageBatch}, and keeps each delete that failed (the whole request, or one entry of it)
 * to send again with the next poll. A delete is kept while its message is still invisible: once the visibility
 * timeout has lapsed the message may be received again, and that receive deletes it as {@code AlreadyProcessed}.
 * Either way a message whose effect is done is never run again, and never lost.
 */
final class PendingDeletes {
    private static final Logger log = LoggerFactory.getLogger(PendingDeletes.class);

    private final SqsClient sqs;
    private final String queueUrl;
    /** Deletes to send again, with the System.nanoTime after which their message may be visible again. */
    private final Map<Message, Long> pending = new LinkedHashMap<>();

    PendingDeletes(SqsClient sqs, String queueUrl) {
        this.sqs = sqs;
        this.queueUrl = queueUrl;
    }

    /** Deletes {@code messages}, which stay invisible for up to {@code invisibleFor}; keeps those that failed. */
    void delete(List<Message> messages, Duration invisibleFor) {
        long deadline = System.nanoTime() + invisibleFor.toNanos();
        for (List<Message> chunk : SqsRequests.chunks(messages)) {
            for (Message failed : send(chunk)) {
                pending.put(failed, deadline);
            }
        }
    }

    /** Sends the kept deletes again, forgetting those whose message may be visible by now. */
    void retry() {
        if (pending.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        Map<Message, Long> due = new LinkedHashMap<>();
        for (Map.Entry<Message, Long> entry : pending.entrySet()) {
            if (now - entry.getValue() >= 0) {
                log.info("message {} may be visible again before its delete got through; its next receive deletes it"
                        + " as already processed", entry.getKey().messageId());
            } else {
                due.put(entry.getKey(), entry.getValue());
            }
        }
        pending.clear();
        for (List<Message> chunk : SqsRequests.chunks(new ArrayList<>(due.keySet()))) {
            for (Message failed : send(chunk)) {
                pending.put(failed, due.get(failed));
            }
        }
    }

    int size() {
        return pending.size();
    }

    /** One {@code DeleteMessageBatch}; returns the messages it did not delete. */
    private List<Message> send(List<Message> chunk) {
        Map<String, Message> byId = SqsRequests.byId(chunk);
        List<DeleteMessageBatchRequestEntry> entries = new ArrayList<>();
        byId.forEach((id, message) -> entries.add(DeleteMessageBatchRequestEntry.builder().id(id)
                .receiptHandle(message.receiptHandle()).build()));
        List<BatchResultErrorEntry> failed;
        try {
            failed = sqs.deleteMessageBatch(b -> b.queueUrl(queueUrl).entries(entries)).failed();
        } catch (SdkException e) {
            log.warn("could not delete {} processed message(s); the delete is sent again with the next poll",
                    chunk.size(), e);
            return chunk;
        }
        List<Message> left = new ArrayList<>(failed.size());
        for (BatchResultErrorEntry entry : failed) {
            Message message = byId.get(entry.id());
            log.warn("could not delete processed message {} ({}: {}); the delete is sent again with the next poll",
                    message.messageId(), entry.code(), entry.message());
            left.add(message);
        }
        return left;
    }
}
