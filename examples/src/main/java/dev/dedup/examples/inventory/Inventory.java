package dev.dedup.examples.inventory;

import java.util.Collection;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** Reserved quantity per SKU. Thread-safe. Every reservation is an effect: reserving twice over-reserves. */
final class Inventory {
    private final Map<String, LongAdder> reserved = new ConcurrentHashMap<>();
    private final AtomicLong reservations = new AtomicLong();

    /** The exact reservations a perfect once-only consumer would make for these unique messages. */
    static Inventory expectedFrom(Collection<ReserveStock> uniqueMessages) {
        Inventory expected = new Inventory();
        uniqueMessages.forEach(message -> expected.reserve(message.sku(), message.quantity()));
        return expected;
    }

    /**
     * What a real reservation costs (a database write): a millisecond, so that consumer threads processing a message
     * and its duplicate overlap as they would in production.
     */
    static void takeAMoment() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Reserves {@code quantity} units of {@code sku}; returns the new reservation's id. */
    String reserve(String sku, int quantity) {
        reserved.computeIfAbsent(sku, s -> new LongAdder()).add(quantity);
        return "rsv-" + reservations.incrementAndGet();
    }

    /** A sorted snapshot, so two inventories compare SKU by SKU with {@code equals}. */
    SortedMap<String, Long> reservedBySku() {
        SortedMap<String, Long> snapshot = new TreeMap<>();
        reserved.forEach((sku, quantity) -> snapshot.put(sku, quantity.sum()));
        return snapshot;
    }
}
