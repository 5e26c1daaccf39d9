package dev.dedup.rabbitmq;

/** What {@link IdempotentDeliverCallback} does with a delivery once it has its outcome. */
public enum Settlement {
    /** basic.ack: processed here or before, or processed here with the completion lost ({@code LeaseLost}). */
    ACK,
    /**
     * Parked: a copy goes to the retry queue (confirmed by the broker), then the delivery is acked; the copy returns
     * to the work queue after the retry delay. If the copy cannot be published, the delivery is nacked with requeue
     * after the same delay instead.
     */
    RETRY_LATER,
    /** basic.reject without requeue: the work queue's dead-letter exchange takes it. */
    DEAD_LETTER
}
