package dev.dedup.examples.inventory;

/** Reserves on every delivery: correct only if the broker delivered each message exactly once, which it does not. */
final class NaiveReservationConsumer implements SimulatedBroker.Subscriber {
    private final Inventory inventory;

    NaiveReservationConsumer(Inventory inventory) {
        this.inventory = inventory;
    }

    @Override
    public boolean deliver(ReserveStock message, SimulatedBroker.Kind kind) {
        Inventory.takeAMoment();
        inventory.reserve(message.sku(), message.quantity());
        return true;
    }
}
