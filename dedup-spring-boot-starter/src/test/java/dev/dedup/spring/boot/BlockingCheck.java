package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * BlockHound in the reactive tests' JVM: a blocking call (a sleep, a socket read, a lock wait) on an event-loop or
 * Reactor thread fails with {@code BlockingOperationError} there, so a filter or aspect that blocks one answers 500
 * and its test fails. The reactive tests run in a JVM of their own (see the module's POM), since JDK 13+ needs
 * {@code -XX:+AllowRedefinitionToAddDeleteMethods} for BlockHound's instrumentation.
 */
final class BlockingCheck {
    private static boolean installed;

    private BlockingCheck() {}

    /** Installs the check once per JVM, and proves it is on: a sleep on a Reactor thread must be refused. */
    static synchronized void install() {
        if (!installed) {
            BlockHound.install();
            installed = true;
        }
        assertThatThrownBy(() -> Mono.delay(Duration.ofMillis(1))
                .doOnNext(tick -> sleep())
                .block(Duration.ofSeconds(5)))
                .as("BlockHound is on: a sleep on a Reactor thread fails")
                .hasMessageContaining("Blocking call!");
    }

    private static void sleep() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
