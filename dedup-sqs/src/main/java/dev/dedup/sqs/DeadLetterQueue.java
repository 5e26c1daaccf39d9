package dev.dedup.sqs;

import dev.dedup.ProcessingOutcome;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.SendMessageRequest;

/** {@link SqsMessageProcessor.Builder#deadLetterQueue}: a copy of each final failure, sent before it is deleted. */
final class DeadLetterQueue {
    private static final Logger log = LoggerFactory.getLogger(DeadLetterQueue.class);
    /** A reason is a line for an operator, not a stack trace; SQS would take up to the message size limit. */
    private static final int MAX_REASON_CHARS = 1000;

    private final SqsClient sqs;
    private final String queueUrl;
    private final boolean fifo;

    DeadLetterQueue(SqsClient sqs, String queueUrl) {
        this.sqs = sqs;
        this.queueUrl = queueUrl;
        this.fifo = SqsMessageProcessor.isFifo(queueUrl);
    }

    /** Sends a copy of {@code message}; false when SQS did not take it, so the original must stay. */
    boolean send(Message message, ProcessingOutcome<?> outcome) {
        Map<String, MessageAttributeValue> attributes = new HashMap<>(message.messageAttributes());
        if (attributes.size() < SqsRequests.MAX_MESSAGE_ATTRIBUTES) {
            attributes.put(SqsMessageProcessor.REASON_ATTRIBUTE, MessageAttributeValue.builder().dataType("String")
                    .stringValue(reason(outcome)).build());
        }
        SendMessageRequest.Builder request = SendMessageRequest.builder().queueUrl(queueUrl)
                .messageBody(message.body()).messageAttributes(attributes);
        if (fifo) {
            // The copy keeps its group; the original's id keeps a resend within 5 minutes from doubling it.
            request.messageGroupId(BatchWalk.groupOf(message)).messageDeduplicationId(message.messageId());
        }
        try {
            sqs.sendMessage(request.build());
            log.warn("message {} can never take effect ({}); sent to the dead-letter queue {}", message.messageId(),
                    reason(outcome), queueUrl);
            return true;
        } catch (SdkException e) {
            log.warn("could not send message {} to the dead-letter queue {}; it stays on the queue and comes again",
                    message.messageId(), queueUrl, e);
            return false;
        }
    }

    /** Why the outcome is final, in one line. */
    static String reason(ProcessingOutcome<?> outcome) {
        String reason;
        if (outcome instanceof ProcessingOutcome.AlreadyFailed<?> failed) {
            reason = "already failed: " + failed.error().orElse("(no description stored)");
        } else if (outcome instanceof ProcessingOutcome.KeyReused<?> reused) {
            reason = "key reused: " + reused.key() + " is held by a message with another payload fingerprint";
        } else if (outcome instanceof ProcessingOutcome.Failed<?> failed && failed.key() == null) {
            reason = "no key: " + failed.cause();
        } else if (outcome instanceof ProcessingOutcome.Failed<?> failed) {
            reason = "failed: " + failed.cause();
        } else {
            reason = outcome.toString();
        }
        return reason.length() <= MAX_REASON_CHARS ? reason : reason.substring(0, MAX_REASON_CHARS);
    }
}
