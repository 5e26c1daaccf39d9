package dev.dedup.spring.boot;

import dev.dedup.tck.MutantRun;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;

/**
 * Proves the {@code @Idempotent @KafkaListener} tests can fail: runs the control's catching test on a mutant
 * application and fails unless that test fails on it, by the assertion named here. The control, the same test with
 * the starter's {@link IdempotentKafkaErrorHandler}, is {@link IdempotentKafkaListenerOnKafkaTest}. The nested
 * mutant runs only from here (Surefire leaves nested classes alone).
 */
class IdempotentKafkaListenerMutantsTest {
    @Test
    @DisplayName("recovers past an in-progress key: IdempotentKafkaListenerOnKafkaTest"
            + ".aRecordWhoseKeyAnotherConsumerHoldsWaitsForItInsteadOfBeingSkipped fails with Spring Kafka's default"
            + " error handler")
    void recoversPastAnInProgressKey() {
        MutantRun.of(RecoversPastAnInProgressKey.class,
                        "aRecordWhoseKeyAnotherConsumerHoldsWaitsForItInsteadOfBeingSkipped")
                .assertCaughtBy("aRecordWhoseKeyAnotherConsumerHoldsWaitsForItInsteadOfBeingSkipped",
                        "nothing passes the held record");
    }

    /**
     * The application's own {@code DefaultErrorHandler}, as Spring Kafka's docs show it, with the starter's startup
     * check turned off: a record whose key another consumer holds is retried nine times at once, then logged and
     * committed past, and the records after it run. Closed after its run, so no consumer of it lingers.
     */
    @DirtiesContext
    @SpringBootTest(classes = {IdempotentKafkaListenerOnKafkaTest.App.class,
            IdempotentKafkaListenerOnKafkaTest.PlainErrorHandler.class},
            properties = {"dedup.store.create-schema=true", "spring.kafka.consumer.auto-offset-reset=earliest",
                    "test.topic=${test.run-topic}-mutant", "dedup.kafka.require-error-handler=false"})
    static class RecoversPastAnInProgressKey extends IdempotentKafkaListenerOnKafkaTest {}
}
