package dev.dedup.benchmarks.report;

import java.util.List;

/**
 * What the report says around the numbers.
 *
 * @param title       e.g. "dedup benchmarks, 2025-11-30 10:15, full profile"
 * @param profile     how JMH ran (forks, warm-up, iterations, threads)
 * @param machine     cores, CPU, memory, JDK and OS
 * @param storeNotes  one line per store: server, client, and that MongoDB is an emulator
 * @param smoke       true for the quick profile, whose numbers only show that every benchmark runs
 */
public record ReportContext(String title, String profile, String machine, List<String> storeNotes, boolean smoke) {}
