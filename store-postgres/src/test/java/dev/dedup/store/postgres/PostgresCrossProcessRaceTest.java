package dev.dedup.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Two JVMs, each with its own pool, race on the same 1,000 keys of one table: exactly one winner per key. */
class PostgresCrossProcessRaceTest {
    private static final int KEYS = 1_000;

    @BeforeAll
    static void createTheTable() {
        try (var pool = PostgresTestSupport.pool(2)) {
            PostgresDedupStore.builder(pool).validateSchema(false).build().createSchema();
        }
    }

    @Test
    @DisplayName("two processes racing on 1,000 keys win disjoint sets that together cover every key")
    void exactlyOneWinnerAcrossProcesses() throws Exception {
        String url = PostgresTestSupport.jdbcUrl();
        String namespace = "race-" + UUID.randomUUID().toString().substring(0, 8);
        String java = ProcessHandle.current().info().command().orElse("java");
        Process other = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                ClaimRacer.class.getName(), url, namespace, String.valueOf(KEYS))
                .redirectError(new File("target/claim-racer.err"))
                .start();
        BufferedReader lines = new BufferedReader(new InputStreamReader(other.getInputStream(), StandardCharsets.UTF_8));
        Writer commands = new OutputStreamWriter(other.getOutputStream(), StandardCharsets.UTF_8);

        // Both sides warm up first; then both start at once: the other on GO, this one right after sending it.
        List<String> wonHere = ClaimRacer.race(url, namespace, KEYS, false, () -> {
            assertThat(lines.readLine()).as("the other racer is ready (see target/claim-racer.err)").isEqualTo("READY");
            commands.write("GO\n");
            commands.flush();
        });
        List<String> wonThere = new ArrayList<>();
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
            if (line.startsWith("WON ")) {
                wonThere.add(line.substring(4));
            }
        }
        assertThat(other.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(other.exitValue()).as("the other racer's exit code (see target/claim-racer.err)").isZero();

        System.out.printf("cross-process race on %d keys: this JVM won %d, the other %d%n", KEYS, wonHere.size(),
                wonThere.size());
        Set<String> all = new HashSet<>(wonHere);
        all.addAll(wonThere);
        assertThat(wonHere.size() + wonThere.size()).as("total wins").isEqualTo(KEYS);
        assertThat(all).as("distinct keys won").hasSize(KEYS);
        assertThat(wonThere).as("the other process won some keys too, so they really raced").isNotEmpty();
        assertThat(wonHere).isNotEmpty();
    }
}
