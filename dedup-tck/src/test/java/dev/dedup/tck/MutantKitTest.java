package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.dedup.tck.MutantDedupStore.Mutation;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.EnumMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Proves the kit can fail: runs the whole kit against each {@link Mutation} of {@link MutantDedupStore} and fails
 * unless the kit fails on every one, by at least one assertion (a crash or a timeout alone does not count). The
 * unbroken store is the control: the same run on it must pass every test, or the failures prove nothing.
 *
 * <p>Each kit run is sequential, as in a store's build; {@value #PARALLEL_RUNS} runs go at once, since a run
 * mostly sleeps out short leases. Which kit tests catch which mutant is printed and written to
 * {@code target/mutant-report.md}.
 */
class MutantKitTest {
    private static final int PARALLEL_RUNS = 4;
    private static final Path REPORT = Path.of("target", "mutant-report.md");
    private static final Map<Mutation, KitRun> RUNS = new EnumMap<>(Mutation.class);
    private static long wallMillis;

    @BeforeAll
    static void runTheKitOnEveryMutant() throws Exception {
        long start = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(PARALLEL_RUNS);
        try {
            Map<Mutation, Future<KitRun>> runs = new EnumMap<>(Mutation.class);
            for (Mutation mutation : Mutation.values()) {
                runs.put(mutation, pool.submit(() -> runKit(mutation)));
            }
            for (var run : runs.entrySet()) {
                RUNS.put(run.getKey(), run.getValue().get(10, TimeUnit.MINUTES));
            }
        } finally {
            pool.shutdownNow();
        }
        wallMillis = (System.nanoTime() - start) / 1_000_000;
    }

    @Test
    @DisplayName("control: the kit passes on the unbroken mutant store")
    void kitPassesOnTheUnbrokenStore() {
        KitRun run = RUNS.get(Mutation.NONE);

        assertThat(run.failedTests).as("kit tests failing on the unbroken store").isEmpty();
        assertThat(run.aborted + run.skipped).as("kit tests aborted or skipped on the unbroken store").isZero();
        // Every contract test ran: a discovery problem must not pass as a clean run.
        assertThat(run.succeeded).as("kit tests passed").isGreaterThan(60);
    }

    @TestFactory
    @DisplayName("the kit fails on every mutant store")
    Stream<DynamicTest> kitCatchesEveryMutant() {
        return Arrays.stream(Mutation.values()).filter(mutation -> mutation != Mutation.NONE).map(mutation ->
                DynamicTest.dynamicTest(mutation.name(), () -> {
                    KitRun run = RUNS.get(mutation);

                    assertThat(run.failedTests).as("kit tests failing on mutant %s (%s)", mutation, mutation.description)
                            .isNotEmpty();
                    assertThat(run.caughtByAssertion)
                            .as("kit tests whose assertions (not a crash or a timeout) fail on mutant %s", mutation)
                            .isNotEmpty();
                }));
    }

    @AfterAll
    static void report() throws IOException {
        StringBuilder table = new StringBuilder("| mutant | what it breaks | kit tests that fail on it | run |\n")
                .append("| --- | --- | --- | --- |\n");
        for (var entry : RUNS.entrySet()) {
            Mutation mutation = entry.getKey();
            KitRun run = entry.getValue();
            List<String> caught = new ArrayList<>();
            run.failedTests.forEach((test, why) -> caught.add("`" + test + "`" + (why.isEmpty() ? "" : " (" + why + ")")));
            table.append("| `").append(mutation).append("` | ").append(mutation.description).append(" | ")
                    .append(caught.isEmpty() ? "none" : String.join(", ", caught)).append(" | ")
                    .append(run.millis / 100 / 10.0).append(" s |\n");
        }
        table.append("\n").append(RUNS.size()).append(" kit runs, ").append(PARALLEL_RUNS).append(" at a time, in ")
                .append(wallMillis / 100 / 10.0).append(" s.\n");
        System.out.println(table);
        Files.createDirectories(REPORT.getParent());
        Files.writeString(REPORT, table);
    }

    private static KitRun runKit(Mutation mutation) {
        KitRun run = new KitRun();
        Launcher launcher = LauncherFactory.create();
        long start = System.nanoTime();
        launcher.execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(KitOnMutantStore.class))
                .configurationParameter(KitOnMutantStore.MUTATION, mutation.name())
                // A mutant that stretches a wait must fail the test, not hang the build.
                .configurationParameter("junit.jupiter.execution.timeout.default", "20 s")
                .build(), run);
        run.millis = (System.nanoTime() - start) / 1_000_000;
        return run;
    }

    /** What one kit run did: tests passed, aborted and skipped, and each failed test method with how it failed. */
    private static final class KitRun implements TestExecutionListener {
        // Test method name -> "" when an assertion failed, else the exception type; parameterized runs merge.
        final Map<String, String> failedTests = new TreeMap<>();
        final List<String> caughtByAssertion = new ArrayList<>();
        int succeeded;
        int aborted;
        int skipped;
        long millis;

        @Override
        public synchronized void executionSkipped(TestIdentifier test, String reason) {
            skipped++;
        }

        @Override
        public synchronized void executionFinished(TestIdentifier test, TestExecutionResult result) {
            if (!test.isTest()) {
                return;
            }
            switch (result.getStatus()) {
                case SUCCESSFUL -> succeeded++;
                case ABORTED -> aborted++;
                case FAILED -> {
                    String method = test.getSource().filter(MethodSource.class::isInstance)
                            .map(source -> ((MethodSource) source).getMethodName()).orElse(test.getDisplayName());
                    Throwable cause = result.getThrowable().orElse(null);
                    boolean assertion = cause instanceof AssertionError;
                    if (assertion && !caughtByAssertion.contains(method)) {
                        caughtByAssertion.add(method);
                    }
                    String how = assertion ? "" : cause == null ? "failed" : cause.getClass().getSimpleName();
                    // An assertion anywhere in a parameterized test's runs wins over a crash in another.
                    failedTests.merge(method, how, (old, now) -> old.isEmpty() || now.isEmpty() ? "" : old);
                }
            }
        }
    }
}
