package dev.dedup.benchmarks.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

/** The report from made-up measurements: no server, no JMH run. */
class ReportTest {
    private static final List<String> STORE_ORDER = List.of("memory", "postgres", "redis");
    private static final ReportContext CONTEXT = new ReportContext("dedup benchmarks, test", "full: made up",
            "2 cores", List.of("mongo: an EMULATOR & not mongod"), false);

    private static Measurement store(String store, int rows, Operation operation, int threads, double score) {
        return new Measurement(false, store, rows, operation, threads, score, score / 20);
    }

    private static Measurement baseline(String store, int rows, Operation operation, int threads, double score) {
        return new Measurement(true, store, rows, operation, threads, score, Double.NaN);
    }

    private static final List<Measurement> MEASUREMENTS = List.of(
            baseline("redis", 0, Operation.CLAIM_FRESH_KEY, 4, 40_000),
            store("redis", 0, Operation.CLAIM_FRESH_KEY, 4, 38_000),
            store("redis", 0, Operation.CLAIM_ALL_100, 4, 300_000),
            baseline("redis", 0, Operation.CLAIM_ALL_100, 4, 350_000),
            store("postgres", 1_000_000, Operation.CLAIM_FRESH_KEY, 1, 3_000),
            baseline("postgres", 1_000_000, Operation.CLAIM_FRESH_KEY, 1, 4_000),
            store("postgres", 1_000_000, Operation.CLAIM_ALL_100, 1, 20_000),
            store("memory", 0, Operation.CLAIM_FRESH_KEY, 1, 2_500_000));

    @Test
    void pairsEachStoreWithItsBaselineInCatalogueOrder() {
        List<Row> rows = Row.pair(MEASUREMENTS, STORE_ORDER);

        assertThat(rows).extracting(Row::storeLabel).containsExactly("memory", "postgres, 1M rows",
                "postgres, 1M rows", "redis", "redis");
        assertThat(rows.get(0).baseline()).isNull();
        assertThat(rows.get(0).ratio()).isNaN();
        assertThat(rows.get(1).ratio()).isEqualTo(0.75);
        assertThat(rows.get(2).baseline()).isNull(); // no baseline measured for it: shown without a ratio
        assertThat(rows.get(3).ratio()).isEqualTo(0.95);
    }

    @Test
    void markdownShowsScoresErrorsRatiosAndTargets() {
        String md = MarkdownReport.render(Row.pair(MEASUREMENTS, STORE_ORDER), CONTEXT);

        assertThat(md).contains("| redis | claim, fresh key | 4 | 38,000 ± 1,900 ops/s | 40,000 ops/s | 0.95 |");
        assertThat(md).contains("| memory | claim, fresh key | 1 | 2,500,000 ± 125,000 ops/s | (floor) |  |");
        assertThat(md).contains("| redis | claimAll, 100 keys | 4 | 300,000 ± 15,000 keys/s | 350,000 keys/s | 0.86 |");
        // Fresh-claim target: 0.95 is met, 0.75 is not.
        assertThat(md).contains("| redis | 4 | 0.95 | met |");
        assertThat(md).contains("| postgres, 1M rows | 1 | 0.75 | **missed** |");
        // Batch target: 300k keys/s over 38k claims/s is 7.9x (missed); 20k over 3k is 6.7x (missed).
        assertThat(md).contains("| redis | 4 | 300,000 keys/s | 38,000 ops/s | 7.9x | **missed** |");
        assertThat(md).contains("| postgres, 1M rows | 1 | 20,000 keys/s | 3,000 ops/s | 6.7x | **missed** |");
        // Issue 15's shares: the Redis batch at 0.86 meets 0.8.
        assertThat(md).contains("| redis | claimAll, 100 keys | 4 | 0.86 | 0.80 | met |");
        assertThat(md).contains("- mongo: an EMULATOR & not mongod");
    }

    @Test
    void svgIsWellFormedWithOnePanelPerThreadCountAndEscapedText() throws Exception {
        String svg = SvgChart.render(Row.pair(MEASUREMENTS, STORE_ORDER), CONTEXT);

        Document document = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        assertThat(document.getDocumentElement().getTagName()).isEqualTo("svg");
        assertThat(svg).contains(">1 thread<", ">4 threads<", "an EMULATOR &amp; not mongod");
        assertThat(document.getElementsByTagName("rect").getLength()).isEqualTo(1 + 3 + 5); // background, legend, bars
    }

    @Test
    void longFooterLinesAreWrappedAtSpaces() {
        assertThat(SvgChart.wrap(List.of("aaaa bbbb cccc"), 10)).containsExactly("aaaa bbbb", "    cccc");
    }

    @Test
    void numbersAreGroupedOrCompact() {
        assertThat(Numbers.grouped(1234567.8)).isEqualTo("1,234,568");
        assertThat(Numbers.grouped(65.951)).isEqualTo("65.95");
        assertThat(Numbers.compact(12_345)).isEqualTo("12.3k");
        assertThat(Numbers.compact(1_000_000)).isEqualTo("1M");
        assertThat(Numbers.compact(950)).isEqualTo("950");
    }

    @Test
    void kafkaSectionShowsRecordsPerSecondAndTheThreeTargets() {
        List<KafkaMeasurement> kafka = List.of(
                new KafkaMeasurement("no-dedup", 100_000, 5_000, 200),
                new KafkaMeasurement("batch-redis", 60_000, Double.NaN, 120),
                new KafkaMeasurement("adapter-redis", 15_000, Double.NaN, 30),
                new KafkaMeasurement("per-record-redis", 10_000, Double.NaN, 20),
                new KafkaMeasurement("batch-postgres", 20_000, Double.NaN, 40),
                new KafkaMeasurement("inbox-postgres", 30_000, Double.NaN, 60),
                new KafkaMeasurement("per-record-postgres", 5_000, Double.NaN, 10));

        String md = KafkaReport.render(kafka, false);

        assertThat(md).contains("| no dedup: poll, handler, commitSync | 100,000 ± 5,000 | 500 | 1.00 |");
        assertThat(md).contains("| batch mode (claimAll and settleAll per poll), Redis | 60,000 | 500 | 0.60 |");
        assertThat(md).contains("| adapter (claimAll per poll), Redis | 15,000 | 500 | 0.15 |");
        assertThat(md).contains("| batch mode with Redis >= 0.5x the no-dedup loop | 0.600x | met |");
        assertThat(md).contains("| batch mode with PostgreSQL >= 0.25x the no-dedup loop | 0.200x | **missed** |");
        assertThat(md).contains("| inbox with PostgreSQL >= 0.25x the no-dedup loop | 0.300x | met |");
        assertThat(md).contains("| batch mode >= 5x one claim per record, Redis | 6.0x | met |");
        assertThat(md).contains("| batch mode >= 5x one claim per record, PostgreSQL | 4.0x | **missed** |");
        assertThat(KafkaReport.render(List.of(), false)).isEmpty();
    }

    @Test
    void asyncSectionShowsEachStoresShareOfItsDriverAndTheTarget() {
        String md = AsyncReport.render(List.of(new AsyncReport.Cell("redis", 64, 45_000, 60_000),
                new AsyncReport.Cell("redis-cluster", 64, 30_000, 40_000)), false);

        assertThat(md).contains("| redis | 64 | 45,000 | 60,000 | 0.75 | **missed** |");
        assertThat(md).contains("| redis-cluster | 64 | 30,000 | 40,000 | 0.75 | **missed** |");
        assertThat(AsyncReport.render(List.of(new AsyncReport.Cell("redis", 64, 50_000, 60_000)), false))
                .contains("| 0.83 | met |");
        assertThat(AsyncReport.render(List.of(), false)).isEmpty();
    }

    @Test
    void mariaDbIsHeldToIssue25sSharesOfInsertIgnore() {
        List<Measurement> mariaDb = List.of(
                store("mariadb", 0, Operation.CLAIM_FRESH_KEY, 1, 1_700), baseline("mariadb", 0,
                        Operation.CLAIM_FRESH_KEY, 1, 2_000),
                store("mariadb", 0, Operation.CLAIM_ALL_100, 1, 45_000), baseline("mariadb", 0,
                        Operation.CLAIM_ALL_100, 1, 100_000));

        String md = MarkdownReport.render(Row.pair(mariaDb, List.of("mariadb")), CONTEXT);

        assertThat(md).contains("| mariadb | claim, fresh key | 1 | 0.85 | 0.80 | met |");
        assertThat(md).contains("| mariadb | claimAll, 100 keys | 1 | 0.45 | 0.50 | **missed** |");
    }

    @Test
    void thePeerSectionSaysWhetherTheStoreIsAheadOfSpringIntegration() {
        String md = PeerReport.render(List.of(
                new PeerReport.Cell(Operation.CLAIM_FRESH_KEY, 1, 3_000, 4_000, 2_500),
                new PeerReport.Cell(Operation.CLAIM_LIVE_DUPLICATE, 4, 20_000, 40_000, 25_000)), false);

        assertThat(md).contains("| claim, fresh key | 1 | 3,000 | 4,000 | 2,500 | 0.75 | 1.20 | ahead |");
        assertThat(md).contains("| claim, live duplicate | 4 | 20,000 | 40,000 | 25,000 | 0.50 | 0.80 | **behind** |");
        assertThat(PeerReport.render(List.of(new PeerReport.Cell(Operation.CLAIM_FRESH_KEY, 1, 3_000, 4_000,
                Double.NaN)), false)).contains("| n/a | 0.75 |  | n/a |");
        assertThat(PeerReport.render(List.of(), false)).isEmpty();
    }
}
