package dev.dedup.spring.boot;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.MessageHandler;
import dev.dedup.ProcessingOutcome;
import dev.dedup.jdbc.TransactionalInbox;
import dev.dedup.micrometer.MeteredDedupStore;
import java.sql.Connection;
import javax.sql.DataSource;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.ClassUtils;

/**
 * Runs an {@code @Idempotent(inTransaction = true)} call on the surrounding Spring transaction's own connection: the
 * claim, the method's writes and the completion commit or roll back together. Loaded only with spring-jdbc and
 * dedup-jdbc on the class path.
 */
final class InboxInTransaction {
    private static final boolean METERED = ClassUtils.isPresent("dev.dedup.micrometer.MeteredDedupStore",
            InboxInTransaction.class.getClassLoader());

    private InboxInTransaction() {}

    /**
     * The SQL store behind the application's store bean, or a refusal naming what the store is instead.
     *
     * @param method the method, for messages
     * @param store the application's store bean, perhaps metered
     * @return the store that can join a JDBC transaction
     */
    static TransactionalInbox inboxOf(String method, DedupStore store) {
        DedupStore inner = METERED ? Metering.unwrapped(store) : store;
        if (inner instanceof TransactionalInbox inbox) {
            return inbox;
        }
        throw new DedupConfigurationException(method + " is @Idempotent(inTransaction = true), but the store is a "
                + inner.getClass().getName() + ", which cannot join a JDBC transaction; use a SQL store"
                + " (dedup-store-postgres or dedup-store-mysql) built on the DataSource your transactions use, or"
                + " drop inTransaction to store the result after the commit");
    }

    /**
     * Runs {@code call} through {@code method}'s consumer on the transaction's connection.
     *
     * @param method the method
     * @param store the application's store bean
     * @param call the call
     * @param body the method itself
     * @return what happened; a completion in it commits with the transaction
     * @throws IdempotentTransactionRequiredException when no read-write transaction is active
     * @throws DedupConfigurationException when the transaction holds no connection of the store's DataSource
     */
    static ProcessingOutcome<Object> process(IdempotentMethod method, DedupStore store, MethodInvocation call,
            MessageHandler<MethodInvocation, Object> body) {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IdempotentTransactionRequiredException(method.describe() + " is @Idempotent(inTransaction ="
                    + " true) but was called outside a transaction, where its claim would commit on its own; call it"
                    + " inside one: @Transactional on the method or on its caller, or a TransactionTemplate");
        }
        if (TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
            throw new IdempotentTransactionRequiredException(method.describe() + " is @Idempotent(inTransaction ="
                    + " true) but was called in a read-only transaction, where its claim cannot be written; call it"
                    + " in a read-write one (@Transactional without readOnly = true)");
        }
        TransactionalInbox inbox = inboxOf(method.describe(), store);
        DataSource dataSource = inbox.dataSource();
        if (!TransactionSynchronizationManager.hasResource(dataSource)) {
            throw new DedupConfigurationException(method.describe() + " is @Idempotent(inTransaction = true), but"
                    + " the transaction holds no connection of the store's DataSource (" + dataSource + "): build the"
                    + " store on the DataSource of the transaction manager (DataSourceTransactionManager, or a"
                    + " JpaTransactionManager whose EntityManagerFactory was built on that DataSource), not from"
                    + " dedup.store.uri, whose store has a pool of its own");
        }
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            DedupStore view = inbox.inTransaction(connection);
            return method.consumer.inTransaction(METERED ? Metering.view(store, view) : view).process(call, body);
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }

    /** Kept apart, so that it loads only with dedup-micrometer on the class path. */
    private static final class Metering {
        static DedupStore unwrapped(DedupStore store) {
            return store instanceof MeteredDedupStore metered ? metered.delegate() : store;
        }

        /** The transaction's view, counted in the store bean's meters when the bean is metered. */
        static DedupStore view(DedupStore store, DedupStore view) {
            return store instanceof MeteredDedupStore metered ? metered.forView(view) : view;
        }
    }
}
