package dev.dedup.spring.boot;

import org.junit.jupiter.api.BeforeAll;

/**
 * The WebFlux {@code Idempotency-Key} filter through real HTTP calls, with BlockHound on: the promises of every web
 * stack, none of them paid for with a blocked event-loop thread.
 */
abstract class ReactiveIdempotencyKeyContract extends HttpIdempotencyContract {

    @BeforeAll
    static void blockingCheck() {
        BlockingCheck.install();
    }
}
