package dev.dedup.sqs;

import dev.dedup.MessageHandler;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

/**
 * {@link SqsMessageProcessor.Builder#maxReceives}: a handler failure on a message SQS has delivered that many times
 * ({@code ApproximateReceiveCount}) is kept as final, as {@code keepKeyOn} would keep it, so the message goes to the
 * dead-letter queue instead of coming again. The count is SQS's, so it survives restarts and is shared by every
 * consumer of the queue; it counts receives, including those that found the key held elsewhere.
 */
final class ReceiveLimit {
    private static final Logger log = LoggerFactory.getLogger(ReceiveLimit.class);

    private final int maxReceives;
    /** The exceptions of last attempts, thrown and not yet judged by {@link #keepKeyOn}; any thread. */
    private final Set<Exception> lastAttempts = Collections.synchronizedSet(
            Collections.newSetFromMap(new IdentityHashMap<>()));

    ReceiveLimit(int maxReceives) {
        this.maxReceives = maxReceives;
    }

    /** {@code handler}, marking the exception of a message's last allowed receive. */
    <R> MessageHandler<Message, R> counting(MessageHandler<? super Message, ? extends R> handler) {
        return message -> {
            try {
                return handler.handle(message);
            } catch (Exception e) {
                if (receiveCount(message) >= maxReceives) {
                    log.warn("message {} failed on its receive {} of {}: its key is kept as failed, and it is"
                            + " dead-lettered", message.messageId(), receiveCount(message), maxReceives);
                    lastAttempts.add(e);
                }
                throw e;
            }
        };
    }

    /**
     * The consumer's {@code keepKeyOn}: a last attempt's failure, or the user's. The consumer asks it once right after
     * the counting handler threw, which forgets the exception.
     */
    Predicate<Exception> keepKeyOn(Predicate<? super Exception> nonRetryable) {
        return failure -> lastAttempts.remove(failure) || nonRetryable.test(failure);
    }

    /** SQS's {@code ApproximateReceiveCount} of the message, 1 when absent. */
    static int receiveCount(Message message) {
        String count = message.attributes().get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT);
        try {
            return count == null ? 1 : Math.max(1, Integer.parseInt(count));
        } catch (NumberFormatException e) {
            return 1;
        }
    }
}
