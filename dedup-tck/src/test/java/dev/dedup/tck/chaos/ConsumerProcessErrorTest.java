package dev.dedup.tck.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A chaos test's failure message carries the consumer's error, found among the clients' own log lines. */
class ConsumerProcessErrorTest {
    @Test
    void firstErrorIsTheTraceAfterTheMarkNotAnEarlierLoggedException(@TempDir Path dir) throws Exception {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream err = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            ConsumerProcess.printError(new IllegalStateException("the effect failed"));
        } finally {
            System.setErr(err);
        }
        Path log = dir.resolve("consumers.log");
        Files.writeString(log, "WARN a client logged java.io.IOException: Connection reset\n"
                + captured.toString(StandardCharsets.UTF_8));

        String error = ConsumerProcess.firstError(log);

        assertThat(error).contains("java.lang.IllegalStateException: the effect failed")
                .contains("ConsumerProcessErrorTest").doesNotContain("Connection reset");
    }

    @Test
    void aLogWithoutAnErrorSaysSo(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("consumers.log");
        Files.writeString(log, "INFO started\n");

        assertThat(ConsumerProcess.firstError(log)).isEqualTo("(no consumer error in " + log + ")");
        assertThat(ConsumerProcess.firstError(dir.resolve("missing.log"))).startsWith("(no consumer error in ");
    }
}
