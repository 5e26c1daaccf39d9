package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The concurrency fuzz: threads race to claim the same keys at the same moment, half of them one by one and half
 * through claimAll. Exactly one claim per key may win, checked by counting.
 */
abstract class ConcurrencyContract extends BadInputContract {
    static final int THREADS = 8;
    static final int KEYS = 1_000;
    static final int BATCH = 10;

    @Test
    @DisplayName("fuzz: 8 threads racing key by key on 1,000 fresh keys give exactly one winner per key")
    void exactlyOneWinnerPerFreshKey() throws Exception {
        List<String> keys = newKeys(KEYS);

        assertExactlyOneWinnerEach(keys, race(keys, 1, false));
    }

    @Test
    @DisplayName("fuzz: 8 threads racing claimAll batches, in opposite orders, give exactly one winner per key")
    void exactlyOneWinnerPerKeyInBatches() throws Exception {
        List<String> keys = newKeys(KEYS);

        assertExactlyOneWinnerEach(keys, race(keys, BATCH, true));
    }

    @Test
    @DisplayName("fuzz: 8 threads racing to take over 200 expired records give exactly one winner per key")
    void exactlyOneWinnerPerExpiredKey() throws Exception {
        List<String> keys = newKeys(200);
        Instant lastExpiry = Instant.MIN;
        for (ClaimResult result : store.claimAll(keys, SHORT)) {
            Instant expiresAt = claimed(result).expiresAt();
            lastExpiry = expiresAt.isAfter(lastExpiry) ? expiresAt : lastExpiry;
        }
        sleepPast(lastExpiry);

        assertExactlyOneWinnerEach(keys, race(keys, 1, false));
    }

    @Test
    @DisplayName("fuzz: 8 threads claiming and releasing the same 3 keys for 2 s: every claim decides, one holder at a time")
    void hotKeysChurnWithoutErrorsOrSecondHolders() throws Exception {
        for (boolean viaClaimAll : new boolean[] {false, true}) {
            ClaimChurn.Result churn = ClaimChurn.run(store, THREADS, newKeys(3), 150, viaClaimAll);

            assertThat(churn.errors()).as("errors in %s through %s", churn, viaClaimAll ? "claimAll" : "claim")
                    .isEmpty();
            assertThat(churn.doubleWinners()).as("second holders in %s", churn).isZero();
            assertThat(churn.won()).as("claims won under churn").isPositive();
        }
    }

    private List<String> newKeys(int count) {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            keys.add(newKey());
        }
        return keys;
    }

    /**
     * Every thread claims every key; returns the number of wins per key. Keys go in rounds of {@code round}: all
     * threads wait at a barrier, then claim the same round at once, so each key is contended at the same moment,
     * not merely somewhere in the run (a non-atomic check-then-set slips through the latter). With
     * {@code batched}, each thread claims its round with one claimAll, odd threads in reverse order, which also
     * catches batches that deadlock on each other.
     */
    private Map<String, AtomicInteger> race(List<String> keys, int round, boolean batched) throws Exception {
        Map<String, AtomicInteger> wins = new ConcurrentHashMap<>();
        CyclicBarrier roundStart = new CyclicBarrier(THREADS);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> racers = new ArrayList<>();
            for (int thread = 0; thread < THREADS; thread++) {
                boolean reversed = thread % 2 == 1;
                racers.add(pool.submit(() -> {
                    for (int from = 0; from < keys.size(); from += round) {
                        List<String> slice = new ArrayList<>(keys.subList(from, Math.min(keys.size(), from + round)));
                        if (reversed) {
                            Collections.reverse(slice);
                        }
                        roundStart.await(1, TimeUnit.MINUTES);
                        if (batched) {
                            count(store.claimAll(slice, LONG), wins);
                        } else {
                            for (String key : slice) {
                                count(List.of(store.claim(key, LONG)), wins);
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> racer : racers) {
                racer.get(2, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        return wins;
    }

    private static void count(List<ClaimResult> results, Map<String, AtomicInteger> wins) {
        for (ClaimResult result : results) {
            AtomicInteger counter = wins.computeIfAbsent(result.key(), k -> new AtomicInteger());
            if (result instanceof Claim) {
                counter.incrementAndGet();
            }
        }
    }

    private static void assertExactlyOneWinnerEach(List<String> keys, Map<String, AtomicInteger> wins) {
        assertThat(wins).as("every key was attempted").hasSize(keys.size());
        List<String> wrong = new ArrayList<>();
        int total = 0;
        for (String key : keys) {
            int won = wins.get(key).get();
            total += won;
            if (won != 1) {
                wrong.add(key + " won " + won + " times");
            }
        }
        assertThat(wrong).as("keys without exactly one winner").isEmpty();
        assertThat(total).as("total wins across " + THREADS + " threads").isEqualTo(keys.size());
    }
}
