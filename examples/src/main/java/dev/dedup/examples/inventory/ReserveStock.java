package dev.dedup.examples.inventory;

/** Reserve {@code quantity} units of {@code sku} for an order line; {@code messageId} is the dedup key. */
public record ReserveStock(String messageId, String orderId, String sku, int quantity) {}
