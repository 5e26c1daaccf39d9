package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.DedupStore;
import dev.dedup.RecordState;
import dev.dedup.spring.boot.Bookings.Booking;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * What {@code @Idempotent(inTransaction = true)} promises, whatever writes the business row: the claim, the row and
 * the completion commit together, or roll back together and free the key. Subclasses boot an application on a real
 * server with a {@link Bookings} bean and a SQL store on its {@code DataSource}.
 */
abstract class InboxInTransactionContract {
    @Autowired
    Bookings bookings;
    @Autowired
    DedupStore store;
    @Autowired
    TransactionTemplate transactions;

    static String id() {
        return Servers.unique("booking");
    }

    /** {@return the state of the booking's record, as anyone outside the transaction sees it; null when none} */
    RecordState record(String id) {
        return CompletableFuture.supplyAsync(() -> store.inspect("bookings:" + id)).join()
                .map(found -> found.state()).orElse(null);
    }

    @Test
    void theRowAndTheCompletionCommitTogether() {
        String id = id();

        Booking booked = transactions.execute(status -> {
            Booking inside = bookings.book(id, false);
            // Written, not committed: nothing is seen outside, neither the row nor the record.
            assertThat(bookings.rows(id)).isZero();
            assertThat(record(id)).isNull();
            return inside;
        });

        assertThat(booked).isEqualTo(new Booking(id, 1));
        assertThat(bookings.rows(id)).isEqualTo(1);
        assertThat(record(id)).isEqualTo(RecordState.COMPLETED);
    }

    @Test
    void aDuplicateReturnsTheStoredResultWithoutRunningTheMethod() {
        String id = id();

        Booking first = bookings.book(id, false);
        Booking again = bookings.book(id, false);

        assertThat(again).isEqualTo(first);
        assertThat(bookings.runs(id)).isEqualTo(1);
        assertThat(bookings.rows(id)).isEqualTo(1);
    }

    @Test
    void anExceptionRollsBackTheRowAndTheClaimSoTheRetryRunsOnce() {
        String id = id();

        assertThatThrownBy(() -> bookings.book(id, true)).hasMessage("failed after the booking's write");

        assertThat(bookings.rows(id)).isZero();
        assertThat(record(id)).isNull();   // the key is free
        assertThat(bookings.book(id, false)).isEqualTo(new Booking(id, 2));
        assertThat(bookings.book(id, false)).isEqualTo(new Booking(id, 2));
        assertThat(bookings.rows(id)).isEqualTo(1);
        assertThat(bookings.runs(id)).isEqualTo(2);
    }

    @Test
    void aRollbackAfterTheMethodReturnedUndoesItsCompletionToo() {
        String id = id();

        assertThatThrownBy(() -> transactions.executeWithoutResult(status -> {
            bookings.bookInCallersTransaction(id);
            throw new IllegalStateException("the caller fails after the booking");
        })).hasMessage("the caller fails after the booking");

        assertThat(bookings.rows(id)).isZero();
        assertThat(record(id)).isNull();
        Booking retried = transactions.execute(status -> bookings.bookInCallersTransaction(id));
        assertThat(retried).isEqualTo(new Booking(id, 2));
        assertThat(bookings.rows(id)).isEqualTo(1);
    }

    @Test
    void aCallOutsideATransactionIsRefusedNamingTheFix() {
        String id = id();

        assertThatThrownBy(() -> bookings.bookInCallersTransaction(id))
                .isInstanceOf(IdempotentTransactionRequiredException.class)
                .hasMessageContaining("Bookings.bookInCallersTransaction")
                .hasMessageContaining("called outside a transaction")
                .hasMessageContaining("@Transactional on the method or on its caller");
        assertThat(bookings.runs(id)).isZero();
        assertThat(record(id)).isNull();
    }

    @Test
    void aCallInAReadOnlyTransactionIsRefused() {
        String id = id();

        assertThatThrownBy(() -> bookings.bookReadOnly(id))
                .isInstanceOf(IdempotentTransactionRequiredException.class)
                .hasMessageContaining("read-only transaction");
        assertThat(bookings.runs(id)).isZero();
    }
}
