package dev.dedup.tck;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Churn on hot keys: threads claim the same few keys and release at once what they win, so a claim's write often
 * meets a record released, or claimed again, since it was read. Every claim must still end in a {@code Claim} or a
 * {@code Duplicate}, and a key never has two holders at once. For store tests that prove a claim loop settles.
 *
 * <pre>{@code
 * ClaimChurn.Result result = ClaimChurn.run(store, 8, List.of("a", "b", "c"), 500, false);
 * assertThat(result.errors()).isEmpty();
 * }</pre>
 */
public final class ClaimChurn {
    private static final Duration LEASE = Duration.ofMinutes(5);

    /**
     * What the churn saw: claims made, won, errors thrown (claims and releases), and second holders found.
     *
     * @param claims the claims made, over all threads
     * @param won how many of them returned a {@code Claim}
     * @param errors what claims and releases threw, and releases of a live claim that returned false; empty when the
     *     store coped
     * @param doubleWinners how often a thread won a key another thread still held; must be 0
     * @param took the wall-clock time of the whole run
     */
    public record Result(int claims, int won, List<Throwable> errors, int doubleWinners, Duration took) {
        @Override
        public String toString() {
            return claims + " claims (" + won + " won) in " + took.toMillis() + " ms: " + errors.size() + " errors, "
                    + doubleWinners + " double winners";
        }
    }

    private ClaimChurn() {}

    /**
     * {@code threads} threads each make {@code claimsPerThread} claims on random keys of {@code keys}, releasing
     * each claim they win; through {@code claimAll} of one key when {@code viaClaimAll}.
     *
     * @param store the store under test; stays open
     * @param threads how many threads claim at once; they start together
     * @param keys the hot keys, a few, so that claims collide
     * @param claimsPerThread how many claims each thread makes
     * @param viaClaimAll true to claim through {@code claimAll} with a one-key batch, testing the batch path
     * @return what the churn saw, once every thread has finished
     * @throws InterruptedException if interrupted while waiting for the threads
     */
    public static Result run(DedupStore store, int threads, List<String> keys, int claimsPerThread,
            boolean viaClaimAll) throws InterruptedException {
        Map<String, AtomicReference<String>> holders = new ConcurrentHashMap<>();
        keys.forEach(key -> holders.put(key, new AtomicReference<>()));
        Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
        AtomicInteger won = new AtomicInteger();
        AtomicInteger doubleWinners = new AtomicInteger();
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Thread> workers = new ArrayList<>();
        long started = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                await(start);
                for (int i = 0; i < claimsPerThread; i++) {
                    String key = keys.get(ThreadLocalRandom.current().nextInt(keys.size()));
                    try {
                        ClaimResult result = viaClaimAll ? store.claimAll(List.of(key), LEASE).get(0)
                                : store.claim(key, LEASE);
                        if (result instanceof Claim claim) {
                            won.incrementAndGet();
                            if (!holders.get(key).compareAndSet(null, claim.owner())) {
                                doubleWinners.incrementAndGet();
                            }
                            holders.get(key).set(null); // before the release: the next winner comes after it
                            if (!store.release(claim)) {
                                errors.add(new AssertionError("release of a live claim returned false"));
                            }
                        }
                    } catch (RuntimeException e) {
                        errors.add(e);
                    }
                }
            }, "claim-churn-" + t);
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        return new Result(threads * claimsPerThread, won.get(), List.copyOf(errors), doubleWinners.get(),
                Duration.ofNanos(System.nanoTime() - started));
    }

    private static void await(CyclicBarrier start) {
        try {
            start.await();
        } catch (Exception e) {
            throw new IllegalStateException("churn threads could not start together", e);
        }
    }
}
