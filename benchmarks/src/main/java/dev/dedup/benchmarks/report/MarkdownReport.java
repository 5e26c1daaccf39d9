package dev.dedup.benchmarks.report;

import java.util.List;
import java.util.Locale;

/** results.md: the table of every store beside its raw baseline, then the targets. */
public final class MarkdownReport {
    private MarkdownReport() {}

    public static String render(List<Row> rows, ReportContext context) {
        StringBuilder md = new StringBuilder();
        md.append("# ").append(context.title()).append("\n\n");
        md.append("- Machine: ").append(context.machine()).append('\n');
        md.append("- Profile: ").append(context.profile()).append('\n');
        for (String note : context.storeNotes()) {
            md.append("- ").append(note).append('\n');
        }
        if (context.smoke()) {
            md.append("\n**Quick profile: a smoke test that every benchmark runs. Its numbers come from a single"
                    + " 200 ms iteration without warm-up and are not measurements.**\n");
        }
        md.append("\nThroughput: higher is better. claimAll rows count keys per second. ± is JMH's 99.9% error"
                + " (absent with one iteration). store / baseline is the headline figure: the dedup store's"
                + " throughput over the raw driver doing the same native operation on the same client.\n\n");

        md.append("| store | operation | threads | dedup store | raw baseline | store / baseline |\n");
        md.append("| --- | --- | ---: | ---: | ---: | ---: |\n");
        for (Row row : rows) {
            String unit = " " + row.operation().unit();
            md.append("| ").append(row.storeLabel())
                    .append(" | ").append(row.operation().label())
                    .append(" | ").append(row.threads())
                    .append(" | ").append(withError(row.store())).append(unit)
                    .append(" | ").append(row.baseline() == null ? "(floor)" : withError(row.baseline()) + unit)
                    .append(" | ").append(Numbers.ratio(row.ratio()))
                    .append(" |\n");
        }

        md.append("\n## Targets (reported, not asserted)\n\n");
        if (context.smoke()) {
            md.append("(Quick profile: the verdicts below only show that the checks run.)\n\n");
        }
        md.append("Fresh-key claim within 10% of its raw baseline at the same thread count (store / baseline >= ")
                .append(Numbers.ratio(Targets.FRESH_CLAIM_RATIO)).append("):\n\n");
        md.append("| store | threads | store / baseline | target |\n| --- | ---: | ---: | --- |\n");
        for (Targets.FreshClaim check : Targets.freshClaims(rows)) {
            md.append("| ").append(check.row().storeLabel()).append(" | ").append(check.row().threads())
                    .append(" | ").append(Numbers.ratio(check.row().ratio())).append(" | ")
                    .append(check.met() ? "met" : "**missed**").append(" |\n");
        }
        md.append("\nclaimAll of 100 keys at least 10x the single-claim keys/s (PostgreSQL and Redis):\n\n");
        md.append("| store | threads | claimAll, 100 keys | claim, fresh key | speed-up | target |\n");
        md.append("| --- | ---: | ---: | ---: | ---: | --- |\n");
        for (Targets.BatchSpeedUp check : Targets.batchSpeedUps(rows)) {
            md.append("| ").append(check.batch().storeLabel()).append(" | ").append(check.batch().threads())
                    .append(" | ").append(Numbers.grouped(check.batch().store().score())).append(" keys/s")
                    .append(" | ").append(Numbers.grouped(check.single().store().score())).append(" ops/s")
                    .append(" | ").append(String.format(Locale.ROOT, "%.1fx", check.speedUp()))
                    .append(" | ").append(check.met() ? "met" : "**missed**").append(" |\n");
        }
        md.append("\nDuplicates and batches against the raw call (store / baseline at least the share given):\n\n");
        md.append("| store | operation | threads | store / baseline | target | verdict |\n");
        md.append("| --- | --- | ---: | ---: | ---: | --- |\n");
        for (Targets.RatioCheck check : Targets.ratios(rows)) {
            md.append("| ").append(check.row().storeLabel()).append(" | ").append(check.row().operation().label())
                    .append(" | ").append(check.row().threads())
                    .append(" | ").append(Numbers.ratio(check.row().ratio()))
                    .append(" | ").append(Numbers.ratio(check.target().share()))
                    .append(" | ").append(check.met() ? "met" : "**missed**").append(" |\n");
        }
        md.append("\nChart: results.svg (log scale). Raw JMH results: results.json.\n");
        return md.toString();
    }

    private static String withError(Measurement m) {
        String score = Numbers.grouped(m.score());
        return Double.isNaN(m.error()) || Double.isInfinite(m.error()) ? score
                : score + " ± " + Numbers.grouped(m.error());
    }
}
