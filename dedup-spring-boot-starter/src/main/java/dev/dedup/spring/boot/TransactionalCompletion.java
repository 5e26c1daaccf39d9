package dev.dedup.spring.boot;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Holds an {@link Idempotent} call's completion until the transaction it joined ends: the result is stored after the
 * commit, and a rollback frees the key. Completing inside the transaction would leave a rolled-back call's key
 * completed, and its redelivery would replay a result whose effects never committed. Loaded only with spring-tx on
 * the class path.
 */
final class TransactionalCompletion {
    private TransactionalCompletion() {}

    /** {@return whether the calling thread runs inside a transaction that reports its end} */
    static boolean inTransaction() {
        return TransactionSynchronizationManager.isSynchronizationActive();
    }

    /** {@return a stage that completes with {@code result} when the transaction commits, or fails on rollback} */
    static CompletionStage<Object> afterCommit(Object result) {
        CompletableFuture<Object> outcome = new CompletableFuture<>();
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void afterCompletion(int status) {
                if (status == STATUS_COMMITTED) {
                    outcome.complete(result);
                } else if (status == STATUS_ROLLED_BACK) {
                    outcome.completeExceptionally(new RolledBack());
                } else {
                    // Committed or not, nobody knows (a heuristic outcome): neither replay nor rerun on a guess;
                    // the key lapses with its lease.
                    outcome.cancel(false);
                }
            }
        });
        return outcome;
    }

    /** The surrounding transaction did not commit: the key is released, never kept as failed. */
    static final class RolledBack extends Exception {
        private static final long serialVersionUID = 1L;

        RolledBack() {
            super("the transaction rolled back", null, false, false);
        }
    }
}
