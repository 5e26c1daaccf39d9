package dev.dedup.examples.readme;

import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;

/** The README's Idempotency-Key example, on Java 17 (no pattern switch), with a stand-in HTTP response type. */
class PaymentEndpoint {
    record PaymentRequest(String idempotencyKey, String card, long cents) {}

    record Response(int status, String body) {}

    static final class CardDeclinedException extends Exception {
        CardDeclinedException(String reason) {
            super(reason);
        }
    }

    private final IdempotentConsumer<PaymentRequest, String> payments;

    PaymentEndpoint(DedupStore store) {
        // readme:http-builder
        payments = IdempotentConsumer.builder(store, PaymentRequest::idempotencyKey, ResultCodec.utf8())
                .lease(Duration.ofSeconds(10))
                .retention(Duration.ofHours(24))
                .keepKeyOn(e -> e instanceof CardDeclinedException)   // a decline is final: replay it, never retry
                .failureDescription(Throwable::getMessage)
                .fingerprint(PaymentEndpoint::sha256)    // the same key with another request: KeyReused, never a replay
                .build();
        // end
    }

    /** The request's fingerprint: SHA-256 of its canonical form, the fields in a fixed order. */
    static byte[] sha256(PaymentRequest request) {
        try {
            return MessageDigest.getInstance("SHA-256").digest((request.card() + "\n" + request.cents())
                    .getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required on every Java platform", e);
        }
    }

    private String charge(PaymentRequest request) throws CardDeclinedException {
        if (request.cents() > 100_000) {
            throw new CardDeclinedException("{\"error\":\"limit exceeded\"}");
        }
        return "{\"charged\":" + request.cents() + "}";
    }

    // readme:http-handler
    Response post(PaymentRequest request) {
        ProcessingOutcome<String> outcome = payments.process(request, this::charge);
        if (outcome instanceof ProcessingOutcome.Processed<String> done) {
            return new Response(201, done.result());
        }
        if (outcome instanceof ProcessingOutcome.AlreadyProcessed<String> replay) {
            return new Response(201, replay.result().orElse(""));      // the first response, replayed
        }
        if (outcome instanceof ProcessingOutcome.AlreadyFailed<String> declined) {
            return new Response(402, declined.error().orElse(""));    // the first decline, replayed
        }
        if (outcome instanceof ProcessingOutcome.KeyReused<String>) {
            return new Response(422, "{\"error\":\"Idempotency-Key reused for another request\"}");
        }
        if (outcome instanceof ProcessingOutcome.InProgressElsewhere<String>) {
            return new Response(409, "{\"error\":\"request in progress, retry later\"}");
        }
        if (outcome instanceof ProcessingOutcome.LeaseLost<String> late) {
            return new Response(201, late.result());                  // charged here; alert on this outcome
        }
        ProcessingOutcome.Failed<String> failed = (ProcessingOutcome.Failed<String>) outcome;
        return failed.keyKept() ? new Response(402, failed.cause().getMessage())
                : new Response(503, "{\"error\":\"try again\"}");
    }
    // end
}
