package dev.dedup.spring.boot;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.transaction.annotation.Transactional;

/**
 * A service whose booking is the inbox in its own transaction: {@code @Transactional} and
 * {@code @Idempotent(inTransaction = true)} on the same method, one business row per run. The subclass writes the row
 * (with {@code JdbcTemplate}, or with JPA); runs are counted per id, and each test uses ids of its own.
 */
public abstract class Bookings {
    /** What a booking returns, replayed to a duplicate. */
    public record Booking(String id, int run) {}

    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

    /** Writes the business row; with {@code fail}, throws after it, so the transaction rolls back. */
    @Transactional
    @Idempotent(key = "#id", scope = "bookings", inTransaction = true)
    public Booking book(String id, boolean fail) {
        int run = runs.computeIfAbsent(id, i -> new AtomicInteger()).incrementAndGet();
        write(id, run);
        if (fail) {
            throw new IllegalStateException("failed after the booking's write");
        }
        return new Booking(id, run);
    }

    /** The same booking, without a transaction of its own: only a caller's can hold it. */
    @Idempotent(key = "#id", scope = "bookings", inTransaction = true)
    public Booking bookInCallersTransaction(String id) {
        int run = runs.computeIfAbsent(id, i -> new AtomicInteger()).incrementAndGet();
        write(id, run);
        return new Booking(id, run);
    }

    /** The same booking, in a read-only transaction. */
    @Transactional(readOnly = true)
    @Idempotent(key = "#id", scope = "bookings", inTransaction = true)
    public Booking bookReadOnly(String id) {
        runs.computeIfAbsent(id, i -> new AtomicInteger()).incrementAndGet();
        return new Booking(id, 0);
    }

    int runs(String id) {
        AtomicInteger count = runs.get(id);
        return count == null ? 0 : count.get();
    }

    /** Writes the business row of {@code id}'s run, in the current transaction. */
    abstract void write(String id, int run);

    /** {@return the committed business rows of {@code id}, read outside any transaction of the caller} */
    abstract int rows(String id);
}
