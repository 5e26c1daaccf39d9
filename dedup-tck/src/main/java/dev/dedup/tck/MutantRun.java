package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * One run of a control test class's methods on a mutant (a nested subclass of the control that breaks the entry
 * point), through the JUnit Platform Launcher, and what each method's run ended with. Only the named methods run,
 * so a meta-test costs what its catching tests cost. The entry points' mutant meta-tests share it.
 */
public final class MutantRun implements TestExecutionListener {
    private final Class<?> mutant;
    private final Map<String, TestExecutionResult> results = new HashMap<>();

    private MutantRun(Class<?> mutant) {
        this.mutant = mutant;
    }

    /**
     * Runs {@code methods} of {@code mutant}, inherited from the control, and returns what they did.
     *
     * @param mutant the mutant test class
     * @param methods the names of the control's test methods to run on it
     * @return the run, to assert on
     */
    public static MutantRun of(Class<?> mutant, String... methods) {
        MutantRun run = new MutantRun(mutant);
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(Arrays.stream(methods).map(method -> selectMethod(mutant, method)).toList())
                .configurationParameter("junit.jupiter.execution.timeout.default", "120 s")
                .build(), run);
        return run;
    }

    @Override
    public void executionFinished(TestIdentifier test, TestExecutionResult result) {
        test.getSource().filter(MethodSource.class::isInstance)
                .ifPresent(source -> results.put(((MethodSource) source).getMethodName(), result));
    }

    /**
     * Asserts that {@code method} failed on the mutant by the assertion described as {@code assertion} (its
     * description or message): not by an error of its setup, nor by another assertion such as a wait's timeout.
     *
     * @param method the test method's name
     * @param assertion text of the assertion's description or message that must have failed
     */
    public void assertCaughtBy(String method, String assertion) {
        TestExecutionResult result = results.get(method);
        assertThat(result).as("%s.%s ran", mutant.getSimpleName(), method).isNotNull();
        Throwable failure = result.getThrowable().orElse(null);
        System.out.println("mutant " + mutant.getSimpleName() + ": " + method + " " + result.getStatus() + " "
                + (failure == null ? "" : failure.toString().lines().findFirst().orElse("")));
        assertThat(result.getStatus()).as("%s on the mutant %s", method, mutant.getSimpleName())
                .isEqualTo(TestExecutionResult.Status.FAILED);
        assertThat(failure).as("what failed %s on the mutant %s", method, mutant.getSimpleName())
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining(assertion);
    }
}
