package com.example.payments;

// readme:idempotent-imports
import dev.dedup.spring.boot.Idempotent;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.stereotype.Service;
// end

/**
 * A service method made idempotent with the starter's annotation: a refund requested again for the same payment
 * returns the first refund, and the money moves once. Works the same on a @KafkaListener or @RabbitListener method.
 */
@Service
public class Refunds {
    private final AtomicLong refunds = new AtomicLong();

    record Refund(String paymentId, long cents) {}

    record RefundReceipt(long refundId, String paymentId, long cents) {}

    // readme:idempotent-method
    @Idempotent(key = "#refund.paymentId()", fingerprint = "#refund")
    public RefundReceipt refund(Refund refund) {
        long id = refunds.incrementAndGet();   // the side effect: once per payment
        return new RefundReceipt(id, refund.paymentId(), refund.cents());
    }
    // end

    long refunds() {
        return refunds.get();
    }
}
