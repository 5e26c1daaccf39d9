package dev.dedup.sqs;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The batch an SQS event source hands a function, in the shape of the Lambda runtime's {@code SQSEvent} (without
 * depending on it): map your runtime's event to it, or let a JSON mapper read the event's {@code Records} into it.
 *
 * @param records the messages of the batch, in the order delivered
 */
public record SqsEvent(List<SqsMessage> records) {

    /**
     * Copies the records.
     *
     * @param records the messages of the batch, in the order delivered
     */
    public SqsEvent {
        records = List.copyOf(Objects.requireNonNull(records, "records"));
    }

    /**
     * One message of the batch, as the event carries it.
     *
     * @param messageId the SQS {@code MessageId}; the batch item failure names it
     * @param receiptHandle the receipt handle of this receive
     * @param body the message body
     * @param attributes the system attributes, such as {@code ApproximateReceiveCount} and, on a FIFO queue,
     *     {@code MessageGroupId}
     * @param messageAttributes the message attributes' string values ({@code stringValue}); binary ones left out
     * @param eventSourceArn the queue's ARN; a FIFO queue's ends in {@code .fifo}
     */
    public record SqsMessage(String messageId, String receiptHandle, String body, Map<String, String> attributes,
            Map<String, String> messageAttributes, String eventSourceArn) {

        /**
         * Checks the id and copies the maps (a null map is empty).
         *
         * @param messageId the SQS {@code MessageId}
         * @param receiptHandle the receipt handle of this receive
         * @param body the message body
         * @param attributes the system attributes
         * @param messageAttributes the message attributes' string values
         * @param eventSourceArn the queue's ARN
         */
        public SqsMessage {
            Objects.requireNonNull(messageId, "messageId");
            attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
            messageAttributes = messageAttributes == null ? Map.of() : Map.copyOf(messageAttributes);
        }
    }
}
