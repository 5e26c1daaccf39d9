package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Proves the {@code Idempotency-Key} contract can fail: runs {@link IdempotencyKeyContract} over real HTTP on
 * PostgreSQL against each {@link FilterMutant} and fails unless the contract fails on every one by an assertion. The
 * control, the same contract on the same store with the real filter, is {@link IdempotencyKeyFilterOnPostgresTest}.
 * The nested classes run only from here (Surefire leaves nested classes alone).
 */
class IdempotencyKeyMutantsTest {
    private static final Map<FilterMutant, ContractRun> RUNS = new EnumMap<>(FilterMutant.class);

    @BeforeAll
    static void runTheContractOnEveryMutant() {
        for (FilterMutant mutant : FilterMutant.values()) {
            if (mutant != FilterMutant.NONE) {
                RUNS.put(mutant, run(mutant));
            }
        }
    }

    @TestFactory
    @DisplayName("the contract fails on every mutant filter")
    Stream<DynamicTest> contractCatchesEveryMutant() {
        return Arrays.stream(FilterMutant.values()).filter(mutant -> mutant != FilterMutant.NONE)
                .map(mutant -> DynamicTest.dynamicTest(mutant.name(), () -> {
                    ContractRun run = RUNS.get(mutant);
                    System.out.println("mutant " + mutant + " (" + mutant.description + ") caught by " + run.failed);
                    assertThat(run.succeeded).as("contract tests that pass on it: the application started").isGreaterThan(10);
                    assertThat(run.caughtByAssertion)
                            .as("contract tests whose assertions fail on the filter that %s", mutant.description)
                            .isNotEmpty();
                }));
    }

    private static ContractRun run(FilterMutant mutant) {
        ContractRun run = new ContractRun();
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(switch (mutant) {
                    case NONE -> throw new IllegalArgumentException("the control is IdempotencyKeyFilterOnPostgresTest");
                    case FINGERPRINT_WITHOUT_QUERY -> FingerprintWithoutQuery.class;
                    case STORES_TRANSIENT_4XX -> StoresTransient4xx.class;
                    case SETTLES_ON_ASYNC_START -> SettlesOnAsyncStart.class;
                    case STORES_ERROR_PAGES -> StoresErrorPages.class;
                    case SHARES_ANONYMOUS_SCOPE -> SharesAnonymousScope.class;
                }))
                .configurationParameter("junit.jupiter.execution.timeout.default", "60 s")
                .build(), run);
        return run;
    }

    /** The contract on PostgreSQL, with the mutant's wrapper (or settings) in front of the filter. */
    abstract static class OnMutant extends IdempotencyKeyContract {
        static final String PATHS = "dedup.http.paths=/payments,/flaky,/rejects,/throws,/throttled,/missing,/async/**,/large";

        @DynamicPropertySource
        static void postgres(DynamicPropertyRegistry registry) {
            registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
            registry.add("dedup.namespace", () -> Servers.unique("boot-mutant"));
            registry.add("dedup.store.create-schema", () -> "true");
            registry.add("management.endpoint.health.show-details", () -> "always");
        }
    }

    @SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {OnMutant.PATHS, "test.mutant=FINGERPRINT_WITHOUT_QUERY"})
    static class FingerprintWithoutQuery extends OnMutant {}

    @SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {OnMutant.PATHS, "dedup.http.release-statuses=599"})
    static class StoresTransient4xx extends OnMutant {}

    @SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {OnMutant.PATHS, "test.mutant=SETTLES_ON_ASYNC_START"})
    static class SettlesOnAsyncStart extends OnMutant {}

    @SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {OnMutant.PATHS, "test.mutant=STORES_ERROR_PAGES"})
    static class StoresErrorPages extends OnMutant {}

    @SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {OnMutant.PATHS, "dedup.http.anonymous-callers=shared"})
    static class SharesAnonymousScope extends OnMutant {}

    /** What one contract run did: tests passed, and each failed test method with whether an assertion failed it. */
    private static final class ContractRun implements TestExecutionListener {
        final List<String> failed = new ArrayList<>();
        final List<String> caughtByAssertion = new ArrayList<>();
        int succeeded;

        @Override
        public void executionFinished(TestIdentifier test, TestExecutionResult result) {
            if (!test.isTest()) {
                return;
            }
            if (result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) {
                succeeded++;
                return;
            }
            String method = test.getSource().filter(MethodSource.class::isInstance)
                    .map(source -> ((MethodSource) source).getMethodName()).orElse(test.getDisplayName());
            failed.add(method);
            if (result.getThrowable().orElse(null) instanceof AssertionError) {
                caughtByAssertion.add(method);
            }
        }
    }
}
