package dev.dedup.tck.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SharedClassArchiveTest {
    private static final String JAVA = ProcessHandle.current().info().command().orElse("java");

    /** What the consumer JVMs run, reduced to a main class from a class path directory. */
    public static final class ArchivedMain {
        public static void main(String[] args) {
            System.out.println("listed " + List.of(args).size());
        }
    }

    @Test
    void aJvmStartedAfterTheDumpMapsTheListedClassesOfTheClassPathsDirectoriesFromTheArchive() throws Exception {
        SharedClassArchive archive = SharedClassArchive.packed(System.getProperty("java.class.path"), 0);

        List<String> recording = archive.jvmOptions(JAVA);
        assertThat(recording).anyMatch(option -> option.startsWith("-XX:DumpLoadedClassList="));
        assertThat(run(recording)).contains("listed 0");
        assertThat(archive.jvmOptions(JAVA)).noneMatch(option -> option.startsWith("-XX:SharedArchiveFile="));
        assertThat(archive.awaitDump(120)).as("the dump ended").isTrue();

        List<String> shared = archive.jvmOptions(JAVA);
        assertThat(shared).anyMatch(option -> option.startsWith("-XX:SharedArchiveFile="));
        assertThat(shared.get(shared.indexOf("-cp") + 1)).doesNotContain("test-classes");
        // -Xshare:on fails the JVM when the archive cannot be mapped; the class itself comes from the archive.
        List<String> strict = new ArrayList<>(List.of("-Xshare:on", "-Xlog:class+load=info"));
        strict.addAll(shared);
        assertThat(run(strict)).contains("listed 0")
                .containsPattern("SharedClassArchiveTest\\$ArchivedMain source: shared objects file");
    }

    private static String run(List<String> options) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(JAVA));
        command.addAll(options);
        command.add(ArchivedMain.class.getName());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        return output;
    }
}
