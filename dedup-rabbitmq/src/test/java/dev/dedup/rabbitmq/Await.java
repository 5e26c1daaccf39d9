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
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + limit + ": " + what);
            }
            Thread.sleep(20);
        }
    }
}
