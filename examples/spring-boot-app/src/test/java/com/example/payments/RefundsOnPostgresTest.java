package com.example.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.spring.boot.IdempotencyKeyReusedException;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The example's @Idempotent service: a refund asked for twice moves the money once, a different one is refused. */
@SpringBootTest
class RefundsOnPostgresTest {
    @DynamicPropertySource
    static void store(DynamicPropertyRegistry registry) {
        String jdbc = System.getenv("DEDUP_TEST_POSTGRES_URL");   // set by scripts/test-servers.sh
        if (jdbc != null && !jdbc.isBlank()) {
            registry.add("dedup.store.uri", () -> jdbc + "&createSchema=true&namespace=example-"
                    + UUID.randomUUID().toString().substring(0, 8));
        }
    }

    @Autowired
    Refunds refunds;

    @Test
    void aRefundAskedForAgainReturnsTheFirstOne() {
        String payment = "pay-" + UUID.randomUUID();
        long before = refunds.refunds();

        Refunds.RefundReceipt first = refunds.refund(new Refunds.Refund(payment, 500));
        Refunds.RefundReceipt again = refunds.refund(new Refunds.Refund(payment, 500));

        assertThat(again).isEqualTo(first);
        assertThat(refunds.refunds()).isEqualTo(before + 1);
        assertThatThrownBy(() -> refunds.refund(new Refunds.Refund(payment, 9999)))
                .isInstanceOf(IdempotencyKeyReusedException.class);
    }
}
