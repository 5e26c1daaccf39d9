package dev.dedup.sqs;

import java.util.Objects;
import java.util.function.Function;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

/**
 * Where a message's dedup key comes from, for {@link SqsMessageProcessor} and {@link SqsBatchHandler}.
 *
 * <p>The {@link #messageId()} is SQS's own: every receive of one sent message carries it, so it catches the
 * redeliveries of a standard queue and of a lapsed visibility timeout. A message sent again (a producer's retry after
 * a timeout, a replay from an archive, a message moved back from a dead-letter queue by hand) gets a new id: key on an
 * id the producer sets once ({@link #messageAttribute}) or on a business field ({@link #of}) to catch those too.
 */
public final class SqsKeys {
    private SqsKeys() {}

    /**
     * The SQS {@code MessageId} (the default): unique per sent message, the same on every receive of it.
     *
     * @return a function reading the message id
     */
    public static Function<Message, String> messageId() {
        return SqsKeys::requireMessageId;
    }

    /**
     * A string (or number) message attribute the producer sets once per business message, such as
     * {@code event-id}.
     *
     * @param name the attribute's name
     * @return a function that throws {@link MissingKeyException} for a message without the attribute, or with an
     *     empty or binary one
     */
    public static Function<Message, String> messageAttribute(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("name must not be blank, but was '" + name + "'");
        }
        return message -> {
            MessageAttributeValue value = message.messageAttributes().get(name);
            String key = value == null ? null : value.stringValue();
            if (key == null || key.isEmpty()) {
                throw new MissingKeyException("message " + message.messageId() + " has no string message attribute '"
                        + name + "' to key it by; it is dead-lettered unprocessed");
            }
            return key;
        };
    }

    /**
     * A business key read from the message, such as an order id in its body.
     *
     * @param keyOf the key of a message; null or empty means the message has none
     * @return a function that throws {@link MissingKeyException} when {@code keyOf} finds no key
     */
    public static Function<Message, String> of(Function<? super Message, String> keyOf) {
        Objects.requireNonNull(keyOf, "keyOf");
        return message -> {
            String key = keyOf.apply(message);
            if (key == null || key.isEmpty()) {
                throw new MissingKeyException("the key function found no key in message " + message.messageId()
                        + "; it is dead-lettered unprocessed");
            }
            return key;
        };
    }

    private static String requireMessageId(Message message) {
        String id = message.messageId();
        if (id == null || id.isEmpty()) {
            throw new MissingKeyException("a message without a MessageId cannot be keyed by it");
        }
        return id;
    }
}
