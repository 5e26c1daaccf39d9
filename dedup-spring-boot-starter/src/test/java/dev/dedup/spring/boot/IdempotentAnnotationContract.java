package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.DedupConfigurationException;
import dev.dedup.spring.boot.Billing.Order;
import dev.dedup.spring.boot.Billing.Receipt;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** {@link Idempotent} methods on a Spring bean, on the store each subclass configures. */
abstract class IdempotentAnnotationContract {
    @Autowired
    Billing billing;

    @Autowired
    MeterRegistry meters;

    static String id() {
        return "o-" + UUID.randomUUID().toString().substring(0, 12);
    }

    @Test
    void aRepeatedCallReturnsTheFirstResultWithoutRunningTheMethod() {
        String id = id();

        Receipt first = billing.charge(new Order(id, 1200));
        Receipt again = billing.charge(new Order(id, 1200));

        assertThat(first).isEqualTo(new Receipt(id, 1200, 1));
        assertThat(again).isEqualTo(first);
        assertThat(billing.runs(id)).isEqualTo(1);
    }

    @Test
    void aGenericResultIsReplayedAsItsDeclaredType() {
        String id = id();

        List<Receipt> first = billing.split(id, 3);
        List<Receipt> again = billing.split(id, 3);

        assertThat(again).isEqualTo(first).hasSize(3).allSatisfy(r -> assertThat(r).isInstanceOf(Receipt.class));
        assertThat(billing.runs(id)).isEqualTo(1);
    }

    @Test
    void aVoidMethodRunsOnce() {
        String id = id();

        billing.notifyShipped(id);
        billing.notifyShipped(id);

        assertThat(billing.runs(id)).isEqualTo(1);
    }

    @Test
    void anExceptionReachesTheCallerAndFreesTheKeyForTheRetry() {
        String id = id();

        assertThatThrownBy(() -> billing.flaky(id)).isExactlyInstanceOf(IllegalStateException.class)
                .hasMessage("first run fails");
        assertThat(billing.flaky(id)).isEqualTo("ok 2");
        assertThat(billing.flaky(id)).isEqualTo("ok 2");
        assertThat(billing.runs(id)).isEqualTo(2);
    }

    @Test
    void aCheckedExceptionReachesTheCallerAsItWasThrown() {
        String id = id();

        assertThatThrownBy(() -> billing.closedLedger(id)).isExactlyInstanceOf(Billing.LedgerClosedException.class);
    }

    @Test
    void aKeptFailureAnswersLaterCallsWithoutRunningTheMethod() {
        String id = id();

        assertThatThrownBy(() -> billing.decline(id)).isInstanceOf(Billing.DeclinedException.class);
        assertThatThrownBy(() -> billing.decline(id)).isInstanceOfSatisfying(IdempotentCallFailedException.class,
                failed -> {
                    assertThat(failed.key()).isEqualTo("dev.dedup.spring.boot.Billing.decline(String):" + id);
                    assertThat(failed.error()).hasValueSatisfying(
                            error -> assertThat(error).contains("DeclinedException", "card declined for " + id));
                });
        assertThat(billing.runs(id)).isEqualTo(1);
    }

    @Test
    void aCallWhileTheFirstStillRunsIsToldWhenToRetry() throws Exception {
        String id = id();
        CompletableFuture<Receipt> first = Billing.startSlowCharge(billing, id, 1500);

        assertThatThrownBy(() -> billing.slowCharge(id, 0))
                .isInstanceOfSatisfying(IdempotentCallInProgressException.class,
                        running -> assertThat(running.leaseExpiresAt()).isAfter(Instant.now()));
        Receipt done = first.get(10, TimeUnit.SECONDS);
        assertThat(billing.slowCharge(id, 0)).isEqualTo(done);
        assertThat(billing.runs(id)).isEqualTo(1);
    }

    @Test
    void theSameKeyWithAnotherFingerprintIsRefused() {
        String id = id();
        Receipt first = billing.charge(new Order(id, 1200));

        assertThatThrownBy(() -> billing.charge(new Order(id, 9900)))
                .isInstanceOfSatisfying(IdempotencyKeyReusedException.class,
                        reused -> assertThat(reused.key()).isEqualTo("dev.dedup.spring.boot.Billing.charge(Order):" + id));
        assertThat(billing.charge(new Order(id, 1200))).isEqualTo(first);
        assertThat(billing.runs(id)).isEqualTo(1);
    }

    @Test
    void eachMethodHasItsOwnKeysUnlessTheyShareAScope() {
        String id = id();

        assertThat(billing.capture(id)).isEqualTo("capture 1");
        assertThat(billing.refund(id)).isEqualTo("refund 1");
        assertThat(billing.sharedA(id)).isEqualTo("a 1");
        assertThat(billing.sharedB(id)).isEqualTo("a 1");
        assertThat(billing.runs(id)).isEqualTo(1);
    }

    @Test
    void aNullKeyFailsTheCallNamingTheExpression() {
        assertThatThrownBy(() -> billing.nullKey(new Order(null, 1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'#order.id()'").hasMessageContaining("Billing.nullKey");
    }

    @Test
    void aBadDurationFailsTheCallNamingTheValueAndWhatIsAllowed() {
        assertThatThrownBy(() -> billing.badLease(id()))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("'thirty seconds'").hasMessageContaining("Billing.badLease")
                .hasMessageContaining("30s");
    }

    @Test
    void overloadsDoNotShareKeys() {
        long number = Math.abs(UUID.randomUUID().getMostSignificantBits() % 1_000_000_000L);
        String text = String.valueOf(number);

        assertThat(billing.lookup(text)).isEqualTo("by string " + text);
        assertThat(billing.lookup(number)).isEqualTo("by number " + number);
        assertThat(billing.runs("lookup-" + text)).isEqualTo(2);
    }

    @Test
    void aResultThatWasNotStoredIsNeverReplayedAsNull() {
        String tooLarge = id();
        String subclass = id();

        assertThat(billing.huge(tooLarge)).hasSize(300 * 1024);
        assertThat(billing.shape(subclass)).isInstanceOf(Billing.Circle.class);

        assertThatThrownBy(() -> billing.huge(tooLarge)).isInstanceOf(IdempotentResultUnavailableException.class)
                .hasMessageContaining(tooLarge);
        assertThatThrownBy(() -> billing.shape(subclass)).isInstanceOf(IdempotentResultUnavailableException.class);
        assertThat(billing.runs(tooLarge)).isEqualTo(1);
        assertThat(billing.runs(subclass)).isEqualTo(1);
    }

    @Test
    void aNullResultIsReplayedAsNull() {
        String id = id();

        assertThat(billing.nothing(id)).isNull();
        assertThat(billing.nothing(id)).isNull();
        assertThat(billing.runs(id)).isEqualTo(1);
    }

    @Test
    void aReturnTypeThatCannotBeReadBackFailsTheFirstCallNamingIt() {
        assertThatThrownBy(() -> billing.anything(id()))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("Billing.anything").hasMessageContaining("java.lang.Object")
                .hasMessageContaining("declare the concrete type");
    }

    @Test
    void theCallerCanTellAReplayFromARunAndReplaysAreCounted() {
        String id = id();
        double before = calls("replayed", "Billing.charge");

        billing.charge(new Order(id, 700));
        boolean firstReplayed = IdempotentCalls.lastCallReplayed();
        billing.charge(new Order(id, 700));
        boolean againReplayed = IdempotentCalls.lastCallReplayed();

        assertThat(firstReplayed).isFalse();
        assertThat(againReplayed).isTrue();
        assertThat(calls("replayed", "Billing.charge") - before).isEqualTo(1);
    }

    @Test
    void withRequiredFalseACallWithoutAKeyRunsUnprotectedAndIsCounted() {
        String id = id();
        double before = calls("without-key", "Billing.chargeIfKeyed");

        billing.chargeIfKeyed(null, new Order(id, 300));
        billing.chargeIfKeyed(null, new Order(id, 300));
        boolean replayed = IdempotentCalls.lastCallReplayed();
        String requestId = "r-" + id;
        billing.chargeIfKeyed(requestId, new Order(id, 300));
        billing.chargeIfKeyed(requestId, new Order(id, 300));

        assertThat(replayed).isFalse();
        assertThat(billing.runs(id)).isEqualTo(3);   // twice without a key, once for the keyed pair
        assertThat(IdempotentCalls.lastCallReplayed()).isTrue();
        assertThat(calls("without-key", "Billing.chargeIfKeyed") - before).isEqualTo(2);
    }

    private double calls(String outcome, String method) {
        var counter = meters.find(MeteredIdempotentCalls.METER).tag("outcome", outcome).tag("method", method)
                .counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void withAnInProgressWaitACallWaitsForTheHolderAndGetsItsResult() throws Exception {
        String id = id();
        CompletableFuture<Receipt> first = Billing.startSlowCharge(billing, id, 400);

        Receipt waited = billing.waitingCharge(id);

        assertThat(waited).isEqualTo(first.get(10, TimeUnit.SECONDS));
        assertThat(IdempotentCalls.lastCallReplayed()).isTrue();
        assertThat(billing.runs(id)).isEqualTo(1);
    }

    @Test
    void aCallThatOutwaitsItsInProgressWaitIsToldToRetry() throws Exception {
        String id = id();
        CompletableFuture<Receipt> first = Billing.startSlowCharge(billing, id, 2500);
        long start = System.nanoTime();

        assertThatThrownBy(() -> billing.waitingCharge(id)).isInstanceOf(IdempotentCallInProgressException.class);
        long waitedMillis = (System.nanoTime() - start) / 1_000_000;

        assertThat(waitedMillis).as("waited about its 1 s before giving up").isBetween(900L, 2400L);
        first.get(10, TimeUnit.SECONDS);
        assertThat(billing.runs(id)).isEqualTo(1);
    }
}
