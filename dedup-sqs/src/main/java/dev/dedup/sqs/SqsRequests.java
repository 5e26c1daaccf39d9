package dev.dedup.sqs;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** SQS's limits, as the processor and the handler check and use them. */
final class SqsRequests {
    /** Entries in one batch request, and messages in one receive. */
    static final int MAX_BATCH_ENTRIES = 10;
    /** The longest visibility timeout SQS accepts: 12 hours. */
    static final int MAX_VISIBILITY_SECONDS = 43_200;
    /** The longest long-polling wait of one receive. */
    static final int MAX_WAIT_SECONDS = 20;
    /** Message attributes one message may carry. */
    static final int MAX_MESSAGE_ATTRIBUTES = 10;

    private SqsRequests() {}

    /** {@code duration} in whole seconds, rounded up, within 0 and {@code max}. */
    static int seconds(Duration duration, int max) {
        long millis = Math.max(0, duration.toMillis());
        return (int) Math.min(max, (millis + 999) / 1000);
    }

    /** A visibility timeout or back-off in whole seconds: 0 s to 12 h, rounded up. */
    static int checkSeconds(String name, Duration duration, int min) {
        Objects.requireNonNull(duration, name);
        if (duration.isNegative() || duration.compareTo(Duration.ofSeconds(MAX_VISIBILITY_SECONDS)) > 0
                || duration.compareTo(Duration.ofSeconds(min)) < 0) {
            throw new IllegalArgumentException(name + " must be " + min + " s to 12 h (SQS counts whole seconds, up"
                    + " to " + MAX_VISIBILITY_SECONDS + "), but was " + duration);
        }
        return seconds(duration, MAX_VISIBILITY_SECONDS);
    }

    /** {@code items} in chunks of at most {@link #MAX_BATCH_ENTRIES}, for batch requests. */
    static <T> List<List<T>> chunks(List<T> items) {
        List<List<T>> chunks = new ArrayList<>();
        for (int from = 0; from < items.size(); from += MAX_BATCH_ENTRIES) {
            chunks.add(items.subList(from, Math.min(items.size(), from + MAX_BATCH_ENTRIES)));
        }
        return chunks;
    }

    /** Batch entry ids for {@code items}: their positions, as SQS wants ids unique within a request. */
    static <T> Map<String, T> byId(List<T> items) {
        Map<String, T> byId = new HashMap<>();
        for (int i = 0; i < items.size(); i++) {
            byId.put(Integer.toString(i), items.get(i));
        }
        return byId;
    }
}
