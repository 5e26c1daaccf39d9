package dev.dedup.rabbitmq;

import com.rabbitmq.client.Delivery;
import dev.dedup.ProcessingOutcome;

/**
 * Told of every delivery's outcome and settlement, on the consumer's thread, after processing and before the
 * settlement is sent to the broker: for metrics and alerts ({@code LeaseLost} above all). Keep it quick; an exception
 * it throws is logged and the delivery is settled all the same.
 *
 * @param <R> the handler's result type
 */
@FunctionalInterface
public interface OutcomeListener<R> {
    /**
     * Called once per delivery.
     *
     * @param delivery the delivery
     * @param outcome what processing it did
     * @param settlement what is about to be done with it
     */
    void onOutcome(Delivery delivery, ProcessingOutcome<? extends R> outcome, Settlement settlement);
}
