package dev.dedup.spring.boot;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** A bean with {@link Idempotent} methods that count their runs per order id: each test uses ids of its own. */
public class Billing {
    /** An order to charge. */
    public record Order(String id, long cents) {}

    /** What a charge answers. */
    public record Receipt(String orderId, long cents, int run) {}

    /** A failure retrying cannot fix: kept with the key. */
    public static class DeclinedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        DeclinedException(String message) {
            super(message);
        }
    }

    /** A checked failure, which must reach the caller as it was thrown. */
    public static class LedgerClosedException extends Exception {
        private static final long serialVersionUID = 1L;

        LedgerClosedException(String message) {
            super(message);
        }
    }

    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

    int runs(String id) {
        AtomicInteger count = runs.get(id);
        return count == null ? 0 : count.get();
    }

    private int run(String id) {
        return runs.computeIfAbsent(id, i -> new AtomicInteger()).incrementAndGet();
    }

    @Idempotent(key = "#order.id()", fingerprint = "#order.cents()")
    public Receipt charge(Order order) {
        return new Receipt(order.id(), order.cents(), run(order.id()));
    }

    /** Deduplicated only when the caller sends a request id. */
    @Idempotent(key = "#requestId", required = false)
    public Receipt chargeIfKeyed(String requestId, Order order) {
        return new Receipt(order.id(), order.cents(), run(order.id()));
    }

    /**
     * Calls {@code billing.slowCharge(id, millis)} on another thread and returns once that call holds the key and
     * runs; a first call that failed instead shows its cause here.
     */
    static CompletableFuture<Receipt> startSlowCharge(Billing billing, String id, long millis)
            throws InterruptedException {
        CompletableFuture<Receipt> first = CompletableFuture.supplyAsync(() -> {
            try {
                return billing.slowCharge(id, millis);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        while (billing.runs(id) == 0 && !first.isDone()) {
            Thread.sleep(5);
        }
        if (first.isDone()) {
            first.join();
        }
        return first;
    }

    @Idempotent(key = "#id", lease = "2s")
    public Receipt slowCharge(String id, long sleepMillis) throws InterruptedException {
        int run = run(id);
        Thread.sleep(sleepMillis);
        return new Receipt(id, 0, run);
    }

    /** {@link #slowCharge}'s keys, but a call whose key is held waits up to 1 s for it. */
    @Idempotent(key = "#id", scope = "dev.dedup.spring.boot.Billing.slowCharge(String,long)", lease = "2s",
            inProgressWait = "1s")
    public Receipt waitingCharge(String id) {
        return new Receipt(id, 0, run(id));
    }

    @Idempotent(key = "#p0")
    public List<Receipt> split(String id, int parts) {
        int run = run(id);
        return java.util.stream.IntStream.range(0, parts).mapToObj(i -> new Receipt(id + "/" + i, i, run)).toList();
    }

    @Idempotent(key = "#id")
    public void notifyShipped(String id) {
        run(id);
    }

    /** Throws on its first run for an id, then answers. */
    @Idempotent(key = "#id")
    public String flaky(String id) {
        if (run(id) == 1) {
            throw new IllegalStateException("first run fails");
        }
        return "ok " + runs(id);
    }

    @Idempotent(key = "#id", keepKeyOn = DeclinedException.class)
    public String decline(String id) {
        run(id);
        throw new DeclinedException("card declined for " + id);
    }

    @Idempotent(key = "#id")
    public String closedLedger(String id) throws LedgerClosedException {
        run(id);
        throw new LedgerClosedException("ledger closed");
    }

    /** Same key values as {@link #refund}, in another scope. */
    @Idempotent(key = "#id")
    public String capture(String id) {
        return "capture " + run("capture-" + id);
    }

    @Idempotent(key = "#id")
    public String refund(String id) {
        return "refund " + run("refund-" + id);
    }

    @Idempotent(key = "#id", scope = "shared")
    public String sharedA(String id) {
        return "a " + run(id);
    }

    @Idempotent(key = "#id", scope = "shared")
    public String sharedB(String id) {
        return "b " + run(id);
    }

    @Idempotent(key = "#order.id()")
    public String nullKey(Order order) {
        return "never";
    }

    @Idempotent(key = "#id", lease = "thirty seconds")
    public String badLease(String id) {
        return "never";
    }

    /** A result of a subclass of the declared type: JSON would read it back as a plain {@link Shape}. */
    @Idempotent(key = "#id")
    public Shape shape(String id) {
        run(id);
        return new Circle(2);
    }

    /** A result over the 256 KiB a record holds. */
    @Idempotent(key = "#id")
    public String huge(String id) {
        run(id);
        return "x".repeat(300 * 1024);
    }

    /** Returns null: replayed as null, not as "no result stored". */
    @Idempotent(key = "#id")
    public String nothing(String id) {
        run(id);
        return null;
    }

    /** Declares Object: JSON cannot tell what to read back. */
    @Idempotent(key = "#id")
    public Object anything(String id) {
        return "never";
    }

    /** An overload with {@link #lookup(Long)}: the same key values, two scopes. */
    @Idempotent(key = "#id")
    public String lookup(String id) {
        run("lookup-" + id);
        return "by string " + id;
    }

    @Idempotent(key = "#id")
    public String lookup(Long id) {
        run("lookup-" + id);
        return "by number " + id;
    }

    /** A plain shape, not final. */
    public static class Shape {
        public int sides;
    }

    /** A shape with a field of its own. */
    public static class Circle extends Shape {
        public int radius;

        Circle(int radius) {
            this.radius = radius;
        }
    }

    /** In a transaction of its own: its result stands whatever its caller's transaction does. */
    @Idempotent(key = "#id")
    @org.springframework.transaction.annotation.Transactional(
            propagation = org.springframework.transaction.annotation.Propagation.REQUIRES_NEW)
    public String captureOnItsOwn(String id) {
        return "own " + run("own-" + id);
    }
}
