package dev.dedup.examples.inventory;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/** A reproducible stream of unique reserve messages: orders of one to three lines over a fixed set of SKUs. */
final class ReserveStockFeed {
    private static final int MAX_LINES_PER_ORDER = 3;
    private static final int MAX_QUANTITY = 5;

    private ReserveStockFeed() {}

    /** {@code count} messages with distinct ids; the same seed always yields the same stream. */
    static List<ReserveStock> generate(long seed, int count, int skuCount) {
        Random random = new Random(seed);
        List<ReserveStock> messages = new ArrayList<>(count);
        int order = 0;
        while (messages.size() < count) {
            order++;
            String orderId = String.format(Locale.ROOT, "order-%05d", order);
            int lines = Math.min(1 + random.nextInt(MAX_LINES_PER_ORDER), count - messages.size());
            for (int line = 0; line < lines; line++) {
                String messageId = String.format(Locale.ROOT, "msg-%06d", messages.size() + 1);
                String sku = String.format(Locale.ROOT, "SKU-%02d", 1 + random.nextInt(skuCount));
                messages.add(new ReserveStock(messageId, orderId, sku, 1 + random.nextInt(MAX_QUANTITY)));
            }
        }
        return List.copyOf(messages);
    }
}
