package dev.dedup.rabbitmq;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polls a condition until it holds; the deadline only guards against a hang, it asserts nothing about speed. */
final class Await {
    private Await() {}

    static void until(String what, BooleanSupplier condition) throws InterruptedException {
        until(what, Duration.ofSeconds(30), condition);
    }

    static void until(String what, Duration limit, BooleanSupplier condition) throws InterruptedException {
        if (!within(limit, condition)) {
            throw new AssertionError("not within " + limit + ": " + what);
        }
    }

    /** Whether the condition came to hold within {@code limit}: for a test to assert on, with its own words. */
    static boolean within(Duration limit, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }
}
