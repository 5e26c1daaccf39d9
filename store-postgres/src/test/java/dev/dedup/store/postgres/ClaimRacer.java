package dev.dedup.store.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * One racer in the cross-process race: claims keys {@code race-0 .. race-(n-1)} with 4 threads through its own
 * pool, starting at an agreed wall-clock instant, and returns the keys it won. Run as a separate JVM by
 * {@link PostgresCrossProcessRaceTest}, which prints nothing else to stdout.
 */
public final class ClaimRacer {
    private ClaimRacer() {}

    public static void main(String[] args) throws Exception {
        for (String key : race(args[0], args[1], Integer.parseInt(args[2]), Long.parseLong(args[3]))) {
            System.out.println("WON " + key);
        }
    }

    static List<String> race(String jdbcUrl, String namespace, int keys, long startAtMillis) throws Exception {
        ConcurrentLinkedQueue<String> won = new ConcurrentLinkedQueue<>();
        try (HikariDataSource pool = PostgresTestSupport.pool(jdbcUrl, 4)) {
            PostgresDedupStore store = PostgresDedupStore.builder(pool).namespace(namespace).build();
            store.claim("warm-up-" + ProcessHandle.current().pid(), Duration.ofSeconds(1));
            ExecutorService threads = Executors.newFixedThreadPool(4);
            List<Future<?>> racers = new ArrayList<>();
            for (int thread = 0; thread < 4; thread++) {
                racers.add(threads.submit(() -> {
                    Thread.sleep(Math.max(0, startAtMillis - System.currentTimeMillis()));
                    for (int i = 0; i < keys; i++) {
                        String key = "race-" + i;
                        if (store.claim(key, Duration.ofMinutes(5)) instanceof Claim) {
                            won.add(key);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> racer : racers) {
                racer.get();
            }
            threads.shutdown();
        }
        return new ArrayList<>(won);
    }
}
