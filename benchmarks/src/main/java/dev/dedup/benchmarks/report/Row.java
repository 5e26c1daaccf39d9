package dev.dedup.benchmarks.report;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** One line of the report: a store's measurement beside its raw baseline's (null for the in-memory floor). */
public record Row(Measurement store, Measurement baseline) {

    /** The store's name as the report shows it: {@code postgres, 1M rows} for a pre-filled table. */
    public String storeLabel() {
        return store.prefilledRows() == 0 ? store.store()
                : store.store() + ", " + Numbers.compact(store.prefilledRows()) + " rows";
    }

    public Operation operation() {
        return store.operation();
    }

    public int threads() {
        return store.threads();
    }

    /** store / baseline throughput, the headline figure; NaN without a baseline. */
    public double ratio() {
        return baseline == null ? Double.NaN : store.score() / baseline.score();
    }

    /**
     * Pairs each store measurement with the baseline of the same store, table size, operation and threads, in the
     * order of {@code storeOrder} (store names), then table size, operation and threads.
     */
    public static List<Row> pair(List<Measurement> measurements, List<String> storeOrder) {
        Map<List<Object>, Measurement> baselines = new HashMap<>();
        for (Measurement m : measurements) {
            if (m.baseline()) {
                baselines.put(key(m), m);
            }
        }
        List<Row> rows = new ArrayList<>();
        for (Measurement m : measurements) {
            if (!m.baseline()) {
                rows.add(new Row(m, baselines.get(key(m))));
            }
        }
        Comparator<Row> order = Comparator
                .comparingInt((Row row) -> rank(storeOrder, row.store().store()))
                .thenComparingInt(row -> row.store().prefilledRows())
                .thenComparing(Row::operation)
                .thenComparingInt(Row::threads);
        rows.sort(order);
        return rows;
    }

    private static List<Object> key(Measurement m) {
        return List.of(m.store(), m.prefilledRows(), m.operation(), m.threads());
    }

    private static int rank(List<String> storeOrder, String store) {
        int index = storeOrder.indexOf(Objects.requireNonNull(store));
        return index < 0 ? storeOrder.size() : index;
    }
}
