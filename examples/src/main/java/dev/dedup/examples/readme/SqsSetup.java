package dev.dedup.examples.readme;

import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.ResultCodec;
import dev.dedup.sqs.SqsBatchHandler;
import dev.dedup.sqs.SqsBatchResponse;
import dev.dedup.sqs.SqsEvent;
import dev.dedup.sqs.SqsKeys;
import dev.dedup.sqs.SqsMessageProcessor;
import java.time.Duration;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

/** docs/sqs.md's receive loop and Lambda-style batch handler, compiled. */
final class SqsSetup {
    static final class UnknownSkuException extends Exception {
        UnknownSkuException(String sku) {
            super("unknown SKU " + sku);
        }
    }

    /** The one method of the Lambda runtime's {@code Context} the handler uses. */
    interface Context {
        int getRemainingTimeInMillis();
    }

    private volatile boolean running = true;

    private static void reserve(String body) throws UnknownSkuException {
        if (body.isEmpty()) {
            throw new UnknownSkuException("(empty)");
        }
    }

    void consume(DedupStore store, String queueUrl) {
        // readme:sqs-loop
        SqsClient sqs = SqsClient.builder().region(Region.EU_WEST_1)
                .httpClient(UrlConnectionHttpClient.create())       // dedup-sqs brings no HTTP client: pick one
                .build();
        try (SqsMessageProcessor<Void> processor = SqsMessageProcessor.builder(sqs, queueUrl, store, ResultCodec.none())
                .keys(SqsKeys.messageAttribute("event-id"))          // default: the MessageId
                .lease(Duration.ofSeconds(30))                       // also the visibility timeout, both renewed while it runs
                .retention(Duration.ofDays(14))                      // at least the queue's MessageRetentionPeriod
                .keepKeyOn(e -> e instanceof UnknownSkuException)    // final: to the dead-letter queue, never retried
                .build()) {
            while (running) {
                processor.poll(Duration.ofSeconds(20), message -> {  // long polling, up to 10 messages
                    reserve(message.body());
                    return null;
                });
            }
        }
        // end
    }

    static final class OrdersFunction {
        // readme:sqs-lambda
        // Opened once per execution environment, reused by every invocation it serves.
        private final DedupStore store = DedupStores.open(System.getenv("DEDUP_STORE_URI"));
        private final SqsBatchHandler<Void> batches = SqsBatchHandler.builder(store, ResultCodec.none())
                .keys(SqsKeys.messageAttribute("event-id"))
                .keepKeyOn(e -> e instanceof UnknownSkuException)
                .build();

        public SqsBatchResponse handleRequest(SqsEvent event, Context context) {
            return batches.handle(event, Duration.ofMillis(context.getRemainingTimeInMillis()), message -> {
                reserve(message.body());
                return null;
            });
        }
        // end
    }
}
