package com.example.payments;

import java.net.URI;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * An ordinary controller: nothing here knows about keys. The starter's filter (dedup.http.paths=/payments) runs it
 * once per Idempotency-Key and replays its response to retries.
 */
@RestController
public class PaymentsController {
    private final AtomicLong charges = new AtomicLong();

    record Payment(String card, long cents) {}

    record Receipt(long id, String card, long cents) {}

    @PostMapping(path = "/payments", produces = MediaType.APPLICATION_JSON_VALUE)
    ResponseEntity<Receipt> pay(@RequestBody Payment payment) {
        long id = charges.incrementAndGet();   // the side effect: one charge per key
        return ResponseEntity.created(URI.create("/payments/" + id)).body(new Receipt(id, payment.card(),
                payment.cents()));
    }

    long charges() {
        return charges.get();
    }
}
