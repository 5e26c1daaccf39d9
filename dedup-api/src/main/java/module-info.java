/**
 * dedup: claim a key once, for a TTL, so that at-least-once delivery becomes effectively-once processing.
 *
 * <p>{@link dev.dedup.DedupStore} is the whole SPI; {@link dev.dedup.DedupStores} opens a store by URI;
 * {@link dev.dedup.IdempotentConsumer} wraps any message handler.
 */
module dev.dedup {
    requires org.slf4j;

    exports dev.dedup;
    exports dev.dedup.spi;
    exports dev.dedup.memory;

    uses dev.dedup.spi.DedupStoreProvider;

    provides dev.dedup.spi.DedupStoreProvider with
            dev.dedup.memory.InMemoryDedupStoreProvider;
}
