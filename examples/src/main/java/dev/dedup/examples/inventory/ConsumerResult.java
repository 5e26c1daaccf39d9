package dev.dedup.examples.inventory;

import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/** One consumer's final reservations next to the exact expected ones, per SKU. */
record ConsumerResult(String name, SortedMap<String, Long> reserved, SortedMap<String, Long> expected) {

    ConsumerResult {
        reserved = Collections.unmodifiableSortedMap(new TreeMap<>(reserved));
        expected = Collections.unmodifiableSortedMap(new TreeMap<>(expected));
    }

    long totalReserved() {
        return reserved.values().stream().mapToLong(Long::longValue).sum();
    }

    long totalExpected() {
        return expected.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Exact for every SKU, not just in sum: an over- and an under-reservation must not cancel out. */
    boolean exact() {
        return reserved.equals(expected);
    }

    /** How many SKUs have a reserved quantity other than the expected one. */
    long skusOff() {
        TreeSet<String> skus = new TreeSet<>(expected.keySet());
        skus.addAll(reserved.keySet());
        return skus.stream()
                .filter(sku -> reserved.getOrDefault(sku, 0L).longValue() != expected.getOrDefault(sku, 0L).longValue())
                .count();
    }
}
