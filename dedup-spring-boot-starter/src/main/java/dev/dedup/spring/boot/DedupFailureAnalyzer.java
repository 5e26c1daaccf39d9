package dev.dedup.spring.boot;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStoreException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;

/**
 * Turns a start that dedup refused into Boot's short "APPLICATION FAILED TO START" report: the library's own message
 * (which names the bad value, what is allowed and the nearest valid name) and what to do, instead of a stack trace
 * many screens long. Failures from outside dedup are left to Boot's other analyzers.
 */
final class DedupFailureAnalyzer implements FailureAnalyzer {
    static final String PROPERTIES_DOCS =
            "https://github.com/dedup-dev/dedup/blob/main/docs/spring-boot.md#all-properties";

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof DedupConfigurationException) {
                return new FailureAnalysis("dedup: " + cause.getMessage(), configurationAction(cause), cause);
            }
            if (cause instanceof DedupStoreException) {
                return new FailureAnalysis("dedup: the store could not be reached: " + cause.getMessage(),
                        "Start the store's server or correct dedup.store.uri (or the client bean the store is"
                                + " built from); dedup.store.timeout bounds how long each call waits.", cause);
            }
            if (cause instanceof IllegalArgumentException && thrownByDedup(cause)) {
                return new FailureAnalysis("dedup: " + cause.getMessage(), "Correct the dedup.* property named"
                        + " above; every property and its range: " + PROPERTIES_DOCS, cause);
            }
        }
        return null;
    }

    private static String configurationAction(Throwable cause) {
        String message = String.valueOf(cause.getMessage());
        if (message.contains("CREATE TABLE") || message.contains("createSchema")) {
            return "Set dedup.store.create-schema=true to create what is missing at start, or run the statements"
                    + " above once (for example in a Flyway or Liquibase migration).";
        }
        return "Correct the dedup.* property or the store URI named above; every property and its range: "
                + PROPERTIES_DOCS;
    }

    /** An argument check of dedup's own (a lease out of range), not one of the application's. */
    private static boolean thrownByDedup(Throwable cause) {
        StackTraceElement[] trace = cause.getStackTrace();
        return trace.length > 0 && trace[0].getClassName().startsWith("dev.dedup.");
    }
}
