package dev.dedup.benchmarks.report;

import java.util.Locale;

/** How the report writes numbers: exact with separators in tables, short (12.3k) on the chart. */
final class Numbers {
    private Numbers() {}

    /** 12,345 (no decimals at or above 100; two significant decimals below). */
    static String grouped(double value) {
        if (Double.isNaN(value)) {
            return "n/a";
        }
        return Math.abs(value) >= 100 ? String.format(Locale.ROOT, "%,.0f", value)
                : String.format(Locale.ROOT, "%,.2f", value);
    }

    /** 950, 12.3k, 1.2M. */
    static String compact(double value) {
        double abs = Math.abs(value);
        if (abs >= 1e6) {
            return trim(value / 1e6) + "M";
        }
        if (abs >= 1e3) {
            return trim(value / 1e3) + "k";
        }
        return trim(value);
    }

    /** 0.93 */
    static String ratio(double value) {
        return Double.isNaN(value) ? "" : String.format(Locale.ROOT, "%.2f", value);
    }

    private static String trim(double value) {
        String text = Math.abs(value) >= 100 ? String.format(Locale.ROOT, "%.0f", value)
                : String.format(Locale.ROOT, "%.1f", value);
        return text.endsWith(".0") ? text.substring(0, text.length() - 2) : text;
    }
}
