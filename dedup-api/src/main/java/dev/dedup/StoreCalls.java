package dev.dedup;

import java.util.function.Supplier;

/** How the facade calls its store. */
final class StoreCalls {
    private StoreCalls() {}

    /**
     * Runs {@code call} with the thread's interrupt flag cleared and restores the flag afterwards. An interrupted
     * consumer must still release or complete its claim: drivers such as Lettuce fail at once on an interrupted
     * thread, which would leave the key held for its whole lease.
     */
    static <T> T uninterrupted(Supplier<T> call) {
        boolean interrupted = Thread.interrupted();
        try {
            return call.get();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
