package dev.dedup.spring.boot;

import dev.dedup.DedupConfigurationException;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.AnnotationTransactionAttributeSource;
import org.springframework.transaction.interceptor.TransactionAttribute;
import org.springframework.transaction.support.ResourceHolderSupport;
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

    private static final AnnotationTransactionAttributeSource TRANSACTION_ATTRIBUTES =
            new AnnotationTransactionAttributeSource();

    /** {@return whether the calling thread runs inside a transaction that reports its end} */
    static boolean inTransaction() {
        return TransactionSynchronizationManager.isSynchronizationActive();
    }

    /**
     * {@return whether the calling thread runs inside a transaction that does not report its end} A transaction
     * manager set to {@code SYNCHRONIZATION_NEVER} (Spring Kafka's {@code KafkaTransactionManager} is, by default)
     * binds its resource to the thread, marked as taking part in a transaction, but calls no synchronization: a result
     * stored at once would stay stored after a rollback, and one stored "after the commit" would never be.
     */
    static boolean inTransactionWithoutSynchronization() {
        if (TransactionSynchronizationManager.isSynchronizationActive()) {
            return false;
        }
        for (Object resource : TransactionSynchronizationManager.getResourceMap().values()) {
            if (resource instanceof ResourceHolderSupport holder && holder.isSynchronizedWithTransaction()) {
                return true;
            }
        }
        return false;
    }

    /** The refusal of a call inside a transaction that does not report its end. */
    static DedupConfigurationException unsynchronized(String method) {
        return new DedupConfigurationException(method + " is called inside a transaction whose manager does no"
                + " transaction synchronization (SYNCHRONIZATION_NEVER, Spring Kafka's KafkaTransactionManager's"
                + " default): its result could not be stored after the commit, nor freed on a rollback. Turn it on:"
                + " transactionManager.setTransactionSynchronization(AbstractPlatformTransactionManager"
                + ".SYNCHRONIZATION_ALWAYS)");
    }

    /**
     * {@return whether the method's own {@code @Transactional} runs it outside the caller's transaction
     * (REQUIRES_NEW, NOT_SUPPORTED, NEVER): its effects commit, or not, on their own, so its result is stored when
     * it returns, whatever the caller's transaction does later}
     */
    static boolean leavesCallersTransaction(Method method, Class<?> targetClass) {
        TransactionAttribute own = TRANSACTION_ATTRIBUTES.getTransactionAttribute(method, targetClass);
        if (own == null) {
            return false;
        }
        int propagation = own.getPropagationBehavior();
        return propagation == TransactionDefinition.PROPAGATION_REQUIRES_NEW
                || propagation == TransactionDefinition.PROPAGATION_NOT_SUPPORTED
                || propagation == TransactionDefinition.PROPAGATION_NEVER;
    }

    /**
     * {@return what an earlier call under {@code key} returned in this transaction, still waiting for its commit;
     * null when none} A second call with the key would find the first one's claim held, by its own transaction.
     */
    static Returned earlierInThisTransaction(String key) {
        PendingResults pending = pendingResults(false);
        return pending == null ? null : pending.byKey.get(key);
    }

    /** Keeps what a call returned for the rest of its transaction, for {@link #earlierInThisTransaction}. */
    static void remember(String key, Object result) {
        pendingResults(true).byKey.put(key, new Returned(result));
    }

    private static PendingResults pendingResults(boolean create) {
        for (TransactionSynchronization registered : TransactionSynchronizationManager.getSynchronizations()) {
            if (registered instanceof PendingResults pending) {
                return pending;
            }
        }
        if (!create) {
            return null;
        }
        PendingResults pending = new PendingResults();
        TransactionSynchronizationManager.registerSynchronization(pending);
        return pending;
    }

    /** What a call returned, null included. */
    record Returned(Object value) {}

    /** The results of this transaction's calls, by key; it ends with the transaction that registered it. */
    private static final class PendingResults implements TransactionSynchronization {
        private final Map<String, Returned> byKey = new HashMap<>();
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
