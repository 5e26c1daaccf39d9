package dev.dedup.rabbitmq;

import dev.dedup.tck.ServerOutages;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Stops a store's server once a chaos run has made some progress, starts it again after {@code length}, and
 * measures how long after its return the first message is processed again. Runs on its own thread, so the driver's
 * kills and the consumers carry on throughout.
 */
final class StoreOutage {
    private final String server;
    private final long afterMessages;
    private final Duration length;
    private final AtomicLong returnedAt = new AtomicLong();
    private final AtomicLong firstProcessedAt = new AtomicLong();
    private volatile boolean paused;
    private volatile boolean over;
    private Thread thread;

    /**
     * @param server the harness's name for the server ({@link ServerOutages#pause})
     * @param afterMessages how many messages must have taken effect before the server stops
     * @param length how long it stays down
     */
    StoreOutage(String server, long afterMessages, Duration length) {
        this.server = server;
        this.afterMessages = afterMessages;
        this.length = length;
    }

    void start(LongSupplier progress) {
        thread = new Thread(() -> {
            try {
                while (progress.getAsLong() < afterMessages) {
                    Thread.sleep(50);
                }
                paused = true;
                ServerOutages.pause(server);
                Thread.sleep(length.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                if (paused) {
                    ServerOutages.resume(server);   // returns once the server answers again
                    returnedAt.set(System.nanoTime());
                }
                over = true;
            }
        }, "chaos-outage-" + server);
        thread.start();
    }

    /** Called on every {@code Processed} outcome; the first one after the server's return ends the recovery. */
    void processed() {
        long returned = returnedAt.get();
        if (returned != 0) {
            firstProcessedAt.compareAndSet(0, System.nanoTime());
        }
    }

    boolean over() {
        return over;
    }

    /** Waits for the outage thread, interrupting a wait that has not begun the outage yet. */
    void finish() throws InterruptedException {
        if (!paused) {
            thread.interrupt();
        }
        thread.join(60_000);
    }

    Duration length() {
        return length;
    }

    /** From the server's return to the first processed message; null if none was processed after it. */
    Duration recovery() {
        long returned = returnedAt.get();
        long processed = firstProcessedAt.get();
        return returned == 0 || processed == 0 ? null : Duration.ofNanos(processed - returned);
    }
}
