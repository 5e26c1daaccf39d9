package dev.dedup.rabbitmq;

/**
 * How many deliveries one {@link IdempotentDeliverCallback} settled each way since it was built.
 *
 * @param acked deliveries acked (includes {@code leaseLost})
 * @param parked deliveries parked in the retry queue and acked
 * @param requeuedLater deliveries that could not be parked and were nacked with requeue after the retry delay
 * @param deadLettered deliveries rejected to the dead-letter exchange
 * @param leaseLost deliveries whose handler ran but whose completion was not recorded: alert on a rise
 */
public record DeliveryCounts(long acked, long parked, long requeuedLater, long deadLettered, long leaseLost) {}
