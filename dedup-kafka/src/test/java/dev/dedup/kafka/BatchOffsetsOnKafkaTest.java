package dev.dedup.kafka;

/**
 * {@link OffsetsOnKafkaTest}'s outcome rules, on a processor that settles each partition batch with one settleAll
 * ({@link KafkaRecordProcessor.Builder#settleInBatches()}): every rule of the per-record mode holds.
 */
class BatchOffsetsOnKafkaTest extends OffsetsOnKafkaTest {
    @Override
    <R> KafkaRecordProcessor.Builder<String, String, R> settling(
            KafkaRecordProcessor.Builder<String, String, R> builder) {
        return builder.settleInBatches();
    }
}
