package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The concurrency fuzz: threads race to claim the same keys, half of them one by one and half through claimAll,
 * each in its own random order. Exactly one claim per key may win, checked by counting.
 */
abstract class ConcurrencyContract extends BadInputContract {
    static final int THREADS = 8;
    static final int KEYS = 1_000;
    static final int BATCH = 50;

    @Test
    @DisplayName("fuzz: 8 threads racing on 1,000 fresh keys give exactly one winner per key")
    void exactlyOneWinnerPerFreshKey() throws Exception {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            keys.add(newKey());
        }

        Map<String, AtomicInteger> wins = race(keys);

        assertExactlyOneWinnerEach(keys, wins);
    }

    @Test
    @DisplayName("fuzz: 8 threads racing to take over 200 expired records give exactly one winner per key")
    void exactlyOneWinnerPerExpiredKey() throws Exception {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            keys.add(newKey());
        }
        Instant lastExpiry = Instant.MIN;
        for (ClaimResult result : store.claimAll(keys, SHORT)) {
            Instant expiresAt = claimed(result).expiresAt();
            lastExpiry = expiresAt.isAfter(lastExpiry) ? expiresAt : lastExpiry;
        }
        sleepPast(lastExpiry);

        Map<String, AtomicInteger> wins = race(keys);

        assertExactlyOneWinnerEach(keys, wins);
    }

    /** Every thread claims every key; returns the number of wins per key. */
    private Map<String, AtomicInteger> race(List<String> keys) throws Exception {
        Map<String, AtomicInteger> wins = new ConcurrentHashMap<>();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> racers = new ArrayList<>();
            for (int thread = 0; thread < THREADS; thread++) {
                List<String> order = new ArrayList<>(keys);
                Collections.shuffle(order, new Random(thread));
                boolean batched = thread % 2 == 1;
                racers.add(pool.submit(() -> {
                    start.await();
                    if (batched) {
                        for (int from = 0; from < order.size(); from += BATCH) {
                            List<String> batch = order.subList(from, Math.min(order.size(), from + BATCH));
                            count(store.claimAll(batch, LONG), wins);
                        }
                    } else {
                        for (String key : order) {
                            count(List.of(store.claim(key, LONG)), wins);
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
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
