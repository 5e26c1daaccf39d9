package com.example.payments;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** Refunds over HTTP, without an Idempotency-Key: the service method itself is idempotent per payment. */
@RestController
public class RefundsController {
    private final Refunds refunds;

    RefundsController(Refunds refunds) {
        this.refunds = refunds;
    }

    @PostMapping("/refunds")
    Refunds.RefundReceipt refund(@RequestBody Refunds.Refund refund) {
        return refunds.refund(refund);
    }
}
