package dev.dedup.kafka;

import dev.dedup.ProcessingOutcome;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;

/**
 * What {@link KafkaRecordProcessor} did with one poll's records.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 * @param <R> the handler's result type
 * @param outcomes one entry per record walked, partition by partition in each partition's order; records after a
 *     partition's first {@link RecordOutcome.Disposition#REDELIVER} are not listed (they come again)
 * @param offsets the offsets committed, or to commit when the processor leaves commits to the caller: per partition,
 *     the offset of the first record that must come again, else the one after the last record; with the offsets
 *     settled before and not committed yet, for the partitions still assigned
 * @param rewound the partitions sought back, with the offset they will be read from again
 * @param commitFailure the commit's failure: during a rebalance ({@code RebalanceInProgressException}), the offsets
 *     are committed with the next poll's commit for the partitions still assigned then; when the member left the
 *     group ({@code CommitFailedException}), the records come again to their new owner, which finds them already
 *     processed
 */
public record PollResult<K, V, R>(List<RecordOutcome<K, V, R>> outcomes, Map<TopicPartition, OffsetAndMetadata> offsets,
        Map<TopicPartition, Long> rewound, Optional<KafkaException> commitFailure) {

    /**
     * Copies the collections.
     *
     * @param outcomes one entry per record walked
     * @param offsets the offsets committed, or to commit
     * @param rewound the partitions sought back, with their offsets
     * @param commitFailure the commit's failure, or empty
     */
    public PollResult {
        outcomes = List.copyOf(outcomes);
        offsets = Map.copyOf(offsets);
        rewound = Map.copyOf(rewound);
        Objects.requireNonNull(commitFailure, "commitFailure");
    }

    /**
     * How many records ended in an outcome of {@code type}, for example {@code ProcessingOutcome.Processed.class}.
     *
     * @param type an outcome type
     * @return the number of records with that outcome
     */
    @SuppressWarnings("rawtypes")
    public long count(Class<? extends ProcessingOutcome> type) {
        return outcomes.stream().filter(outcome -> type.isInstance(outcome.outcome())).count();
    }

    /**
     * How many records ended with {@code disposition}.
     *
     * @param disposition what an outcome meant for the offset
     * @return the number of records with that disposition
     */
    public long count(RecordOutcome.Disposition disposition) {
        return outcomes.stream().filter(outcome -> outcome.disposition() == disposition).count();
    }
}
