package dev.dedup.sqs;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;

/**
 * Sets messages' visibility timeouts with {@code ChangeMessageVisibilityBatch}. A change that fails costs only time:
 * the message keeps the timeout it has and comes back when that lapses.
 */
final class VisibilityChanges {
    private static final Logger log = LoggerFactory.getLogger(VisibilityChanges.class);

    private VisibilityChanges() {}

    /**
     * Sets the visibility timeout of each message to its seconds; {@code ifFailed} says in the log what a failed
     * change means.
     */
    static void apply(SqsClient sqs, String queueUrl, Map<Message, Integer> seconds, String ifFailed) {
        for (List<Message> chunk : SqsRequests.chunks(new ArrayList<>(seconds.keySet()))) {
            Map<String, Message> byId = SqsRequests.byId(chunk);
            List<ChangeMessageVisibilityBatchRequestEntry> entries = new ArrayList<>();
            byId.forEach((id, message) -> entries.add(ChangeMessageVisibilityBatchRequestEntry.builder().id(id)
                    .receiptHandle(message.receiptHandle()).visibilityTimeout(seconds.get(message)).build()));
            try {
                for (BatchResultErrorEntry failed : sqs.changeMessageVisibilityBatch(b -> b.queueUrl(queueUrl)
                        .entries(entries)).failed()) {
                    log.warn("could not change the visibility of message {} ({}: {}); {}",
                            byId.get(failed.id()).messageId(), failed.code(), failed.message(), ifFailed);
                }
            } catch (SdkException e) {
                log.warn("could not change the visibility of {} message(s); {}", chunk.size(), ifFailed, e);
            }
        }
    }
}
