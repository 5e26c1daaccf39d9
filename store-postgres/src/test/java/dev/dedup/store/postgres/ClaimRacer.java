package dev.dedup.store.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * One racer in the cross-process race: claims keys {@code race-0 .. race-(n-1)} with 4 threads through its own
 * pool (the child sweeping from the last key down) and returns the keys it won. Run as a separate JVM by {@link PostgresCrossProcessRaceTest}: it warms up,
 * prints {@code READY}, waits for {@code GO} on stdin, races, and prints {@code WON key} per key won.
 */
public final class ClaimRacer {
    private ClaimRacer() {}

    public static void main(String[] args) throws Exception {
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        List<String> won = race(args[0], args[1], Integer.parseInt(args[2]), true, () -> {
            System.out.println("READY");
            System.out.flush();
            String line = commands.readLine();
            if (!"GO".equals(line)) {
                throw new IllegalStateException("expected GO, got " + line);
            }
        });
        for (String key : won) {
            System.out.println("WON " + key);
        }
    }

    /** Runs once the racer is warmed up, and returns when the race should start. */
    interface StartSignal {
        void await() throws Exception;
    }

    static List<String> race(String jdbcUrl, String namespace, int keys, boolean reverse, StartSignal start)
            throws Exception {
        ConcurrentLinkedQueue<String> won = new ConcurrentLinkedQueue<>();
        try (HikariDataSource pool = PostgresTestSupport.pool(jdbcUrl, 4)) {
            PostgresDedupStore store = PostgresDedupStore.builder(pool).namespace(namespace).build();
            store.claim("warm-up-" + ProcessHandle.current().pid(), Duration.ofSeconds(1));
            ExecutorService threads = Executors.newFixedThreadPool(4);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> racers = new ArrayList<>();
            for (int thread = 0; thread < 4; thread++) {
                racers.add(threads.submit(() -> {
                    go.await();
                    for (int n = 0; n < keys; n++) {
                        // The two processes sweep the keys from opposite ends, so they collide whichever is faster.
                        String key = "race-" + (reverse ? keys - 1 - n : n);
                        if (store.claim(key, Duration.ofMinutes(5)) instanceof Claim) {
                            won.add(key);
                        }
                    }
                    return null;
                }));
            }
            start.await();
            go.countDown();
            for (Future<?> racer : racers) {
                racer.get();
            }
            threads.shutdown();
        }
        return new ArrayList<>(won);
    }
}
