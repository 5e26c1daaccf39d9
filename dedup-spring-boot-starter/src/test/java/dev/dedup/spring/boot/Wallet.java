package dev.dedup.spring.boot;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Reactive {@link Idempotent} methods: each counts its runs per id, and answers after {@code millis}. */
public class Wallet {
    public record Receipt(String id, long cents, int run) {}

    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

    int runs(String id) {
        AtomicInteger count = runs.get(id);
        return count == null ? 0 : count.get();
    }

    private int run(String id) {
        return runs.computeIfAbsent(id, i -> new AtomicInteger()).incrementAndGet();
    }

    /** Fails its first run for an id whose name starts with "fail". */
    @Idempotent(key = "#id", lease = "1s")
    public Mono<Receipt> credit(String id, long cents, long millis) {
        return Mono.delay(Duration.ofMillis(millis)).flatMap(tick -> {
            int run = run(id);
            return id.startsWith("fail") && run == 1 ? Mono.error(new IllegalStateException("first run fails"))
                    : Mono.just(new Receipt(id, cents, run));
        });
    }

    // readme:reactive-idempotent
    @Idempotent(key = "#id")
    public Mono<Receipt> deposit(String id, long cents) {
        return Mono.fromSupplier(() -> new Receipt(id, cents, run(id)));
    }
    // end

    /** {@link #credit}'s keys; a call whose key is held waits up to 3 s, on a timer. */
    @Idempotent(key = "#id", scope = "dev.dedup.spring.boot.Wallet.credit(String,long,long)", inProgressWait = "3s")
    public Mono<Receipt> creditAfterWaiting(String id) {
        return Mono.fromSupplier(() -> new Receipt(id, 100, run(id)));
    }

    @Idempotent(key = "#id")
    public CompletionStage<Receipt> debit(String id, long cents) {
        return CompletableFuture.supplyAsync(() -> new Receipt(id, -cents, run(id)),
                CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS));
    }

    @Idempotent(key = "#id")
    public Mono<Void> close(String id) {
        return Mono.fromRunnable(() -> run(id));
    }

    @Idempotent(key = "#id")
    public Flux<Receipt> history(String id) {
        return Flux.empty();
    }
}
