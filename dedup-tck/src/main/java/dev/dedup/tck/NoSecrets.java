package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/** Asserts that no credential shows in a failure: its message, its causes' and suppressed exceptions' messages. */
public final class NoSecrets {
    private NoSecrets() {}

    /**
     * Fails when any of {@code secrets} appears in the message or {@code toString()} of {@code failure}'s chain.
     *
     * @param failure the exception to inspect, with its causes and suppressed exceptions; must not be null
     * @param secrets the exact strings that must not appear, such as a password raw and percent-encoded
     */
    public static void assertNoSecret(Throwable failure, String... secrets) {
        assertThat(failure).as("the failure").isNotNull();
        check(failure, secrets, Collections.newSetFromMap(new IdentityHashMap<>()));
    }

    private static void check(Throwable failure, String[] secrets, Set<Throwable> seen) {
        if (failure == null || !seen.add(failure)) {
            return;
        }
        for (String secret : secrets) {
            assertThat(String.valueOf(failure.getMessage())).as("message of %s", failure.getClass().getName())
                    .doesNotContain(secret);
            assertThat(failure.toString()).as("%s", failure.getClass().getName()).doesNotContain(secret);
        }
        check(failure.getCause(), secrets, seen);
        for (Throwable suppressed : failure.getSuppressed()) {
            check(suppressed, secrets, seen);
        }
    }
}
