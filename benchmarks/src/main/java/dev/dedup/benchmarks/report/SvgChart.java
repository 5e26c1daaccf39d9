package dev.dedup.benchmarks.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;

/**
 * results.svg, drawn by hand: one panel per thread count; in each, a group of bars per operation and one bar per
 * store, on a log scale shared by all panels (the in-memory floor is orders of magnitude above the servers). A black
 * tick across a bar marks its raw baseline, so the gap between bar top and tick is the store's overhead.
 */
public final class SvgChart {
    private static final int WIDTH = 1000;
    private static final int LEFT = 70;
    private static final int RIGHT = 20;
    private static final int HEADER = 80;
    private static final int PLOT_HEIGHT = 240;
    private static final int PANEL_GAP = 80;
    private static final int FOOTER_LINE = 16;
    private static final String[] PALETTE = {"#8c8c8c", "#1f77b4", "#9ecae1", "#d62728", "#ff9896", "#2ca02c",
            "#9467bd", "#8c564b", "#e377c2", "#17becf"};

    private final List<Row> rows;
    private final ReportContext context;
    private final List<String> storeLabels = new ArrayList<>();
    private final List<Operation> operations = new ArrayList<>();
    private final List<Integer> threadCounts;
    private final double lowDecade;
    private final double highDecade;
    private final StringBuilder svg = new StringBuilder();

    private SvgChart(List<Row> rows, ReportContext context) {
        this.rows = rows;
        this.context = context;
        TreeSet<Integer> threads = new TreeSet<>();
        double min = Double.MAX_VALUE;
        double max = 0;
        for (Row row : rows) {
            if (!storeLabels.contains(row.storeLabel())) {
                storeLabels.add(row.storeLabel());
            }
            if (!operations.contains(row.operation())) {
                operations.add(row.operation());
            }
            threads.add(row.threads());
            for (Measurement m : row.baseline() == null ? List.of(row.store()) : List.of(row.store(), row.baseline())) {
                if (m.score() > 0) {
                    min = Math.min(min, m.score());
                    max = Math.max(max, m.score());
                }
            }
        }
        operations.sort(null);
        this.threadCounts = List.copyOf(threads);
        this.lowDecade = max == 0 ? 0 : Math.floor(Math.log10(min));
        // Headroom above the tallest bar for its rotated value label.
        this.highDecade = max == 0 ? 1 : Math.max(lowDecade + 1, Math.ceil(Math.log10(max) + 0.6));
    }

    public static String render(List<Row> rows, ReportContext context) {
        return new SvgChart(rows, context).draw();
    }

    private String draw() {
        List<String> footer = new ArrayList<>();
        footer.add("Machine: " + context.machine());
        footer.add("Profile: " + context.profile());
        footer.addAll(context.storeNotes());
        footer = wrap(footer, 160);
        int panelsBottom = HEADER + threadCounts.size() * (PLOT_HEIGHT + PANEL_GAP);
        int height = panelsBottom + 10 + footer.size() * FOOTER_LINE + 10;

        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
                + " viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">%n",
                WIDTH, height, WIDTH, height));
        svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", WIDTH, height));
        text(LEFT, 24, 17, "bold", "start", context.title());
        text(LEFT, 42, 12, "normal", "start", "Throughput per second, log scale (claimAll: keys/s). Black tick: raw"
                + " driver baseline." + (context.smoke() ? " QUICK PROFILE: smoke test, not a measurement." : ""));
        drawLegend(62);
        for (int i = 0; i < threadCounts.size(); i++) {
            drawPanel(threadCounts.get(i), HEADER + i * (PLOT_HEIGHT + PANEL_GAP) + 24);
        }
        int y = panelsBottom + 10;
        for (String line : footer) {
            text(LEFT - 60, y, 11, "normal", "start", line);
            y += FOOTER_LINE;
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    private void drawLegend(int y) {
        int x = LEFT;
        for (int i = 0; i < storeLabels.size(); i++) {
            svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>%n",
                    x, y - 10, color(i)));
            text(x + 16, y, 12, "normal", "start", storeLabels.get(i));
            x += 16 + 7 * storeLabels.get(i).length() + 18;
        }
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\""
                + " stroke-width=\"2\"/>%n", x, y - 4, x + 14, y - 4));
        text(x + 18, y, 12, "normal", "start", "raw baseline");
    }

    private void drawPanel(int threads, int top) {
        int bottom = top + PLOT_HEIGHT;
        int plotWidth = WIDTH - LEFT - RIGHT;
        text(LEFT, top - 8, 14, "bold", "start", threads + (threads == 1 ? " thread" : " threads"));
        for (double decade = lowDecade; decade <= highDecade; decade++) {
            double y = y(Math.pow(10, decade), top);
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\""
                    + "/>%n", LEFT, y, LEFT + plotWidth, y));
            text(LEFT - 6, (int) y + 4, 11, "normal", "end", Numbers.compact(Math.pow(10, decade)));
        }
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444444\"/>%n",
                LEFT, bottom, LEFT + plotWidth, bottom));

        double groupWidth = (double) plotWidth / operations.size();
        double slot = Math.min(28, (groupWidth - 16) / storeLabels.size());
        for (int g = 0; g < operations.size(); g++) {
            Operation operation = operations.get(g);
            double groupLeft = LEFT + g * groupWidth;
            double firstBar = groupLeft + (groupWidth - slot * storeLabels.size()) / 2;
            for (Row row : rows) {
                if (row.threads() == threads && row.operation() == operation) {
                    int index = storeLabels.indexOf(row.storeLabel());
                    drawBar(row, firstBar + index * slot, slot - 3, top, color(index));
                }
            }
            int center = (int) (groupLeft + groupWidth / 2);
            text(center, bottom + 18, 12, "normal", "middle", operation.label());
            text(center, bottom + 32, 11, "normal", "middle", "(" + operation.unit() + ")");
        }
    }

    private void drawBar(Row row, double x, double width, int top, String color) {
        double score = row.store().score();
        if (!(score > 0)) {
            return;
        }
        int bottom = top + PLOT_HEIGHT;
        double y = y(score, top);
        String tooltip = row.storeLabel() + ", " + row.operation().label() + ", " + row.threads() + " threads: "
                + Numbers.grouped(score) + " " + row.operation().unit()
                + (row.baseline() == null ? "" : "; raw baseline " + Numbers.grouped(row.baseline().score())
                        + ", store / baseline " + Numbers.ratio(row.ratio()));
        svg.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\""
                + " fill=\"%s\"><title>%s</title></rect>%n", x, y, width, bottom - y, color, escape(tooltip)));
        if (row.baseline() != null && row.baseline().score() > 0) {
            double baseline = y(row.baseline().score(), top);
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\""
                    + " stroke=\"black\" stroke-width=\"2\"/>%n", x - 1, baseline, x + width + 1, baseline));
        }
        double labelX = x + width / 2 + 3;
        double labelY = Math.min(y, row.baseline() == null ? y : y(row.baseline().score(), top)) - 4;
        svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" transform=\"rotate(-90"
                + " %.1f %.1f)\">%s</text>%n", labelX, labelY, labelX, labelY, escape(Numbers.compact(score))));
    }

    private double y(double value, int top) {
        double share = (Math.log10(value) - lowDecade) / (highDecade - lowDecade);
        return top + PLOT_HEIGHT - share * PLOT_HEIGHT;
    }

    private void text(int x, int y, int size, String weight, String anchor, String content) {
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" font-weight=\"%s\""
                + " text-anchor=\"%s\">%s</text>%n", x, y, size, weight, anchor, escape(content)));
    }

    /** Splits lines longer than {@code width} characters at spaces: SVG text does not wrap by itself. */
    static List<String> wrap(List<String> lines, int width) {
        List<String> wrapped = new ArrayList<>();
        for (String line : lines) {
            String rest = line;
            while (rest.length() > width) {
                int cut = rest.lastIndexOf(' ', width);
                if (cut <= 0) {
                    cut = width;
                }
                wrapped.add(rest.substring(0, cut));
                rest = "    " + rest.substring(cut).trim();
            }
            wrapped.add(rest);
        }
        return wrapped;
    }

    private static String color(int index) {
        return PALETTE[index % PALETTE.length];
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
