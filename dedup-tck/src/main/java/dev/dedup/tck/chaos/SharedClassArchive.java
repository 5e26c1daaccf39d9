package dev.dedup.tck.chaos;

import java.io.IOException;
import java.io.OutputStream;
import java.io.File;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * Class data sharing for the consumer JVMs. The chaos drivers start a JVM every second or two, and on a 2-core
 * machine loading and verifying the same few thousand client classes at every start is most of a run's CPU (a Kafka
 * consumer: 2.3 CPU-s per start, 1.4 with the archive). The first JVM on a class path lists the classes it loads;
 * once it has run 5 s, a background JVM dumps them into an archive that later starts map
 * instead of loading. An archive needs a class path of jars only, so the class path's directories (the modules'
 * classes) are packed into jars first, and every consumer runs on those jars. Nothing here changes what a consumer
 * does; a failed dump only costs the speed-up, and a JVM that cannot use the archive runs without it.
 */
final class SharedClassArchive {
    /** How long the first JVM runs before its class list is dumped: past its start-up and first records. */
    private static final long RECORDING_MILLIS = 5_000;
    private static final ConcurrentHashMap<String, SharedClassArchive> ARCHIVES = new ConcurrentHashMap<>();

    private final Path dir;
    private final String jarClassPath;
    private final Path classList;
    private final Path archive;
    private final long recordingMillis;
    private long recordingSince;
    private Process dump;
    private boolean ready;
    private boolean failed;

    private SharedClassArchive(Path dir, String jarClassPath, long recordingMillis) {
        this.dir = dir;
        this.recordingMillis = recordingMillis;
        this.jarClassPath = jarClassPath;
        this.classList = dir.resolve("classes.lst");
        this.archive = dir.resolve("classes.jsa");
    }

    /** The archive for the class path, one per test JVM. */
    static SharedClassArchive forClassPath(String classPath) {
        return ARCHIVES.computeIfAbsent(classPath, path -> packed(path, RECORDING_MILLIS));
    }

    /** {@return the options that put the next JVM on the jar class path and, once dumped, on the archive} */
    synchronized List<String> jvmOptions(String java) {
        List<String> options = new ArrayList<>();
        if (!ready && !failed) {
            advance(java, options);
        }
        if (ready) {
            options.add("-XX:SharedArchiveFile=" + archive);
        }
        options.add("-cp");
        options.add(jarClassPath);
        return options;
    }

    private void advance(String java, List<String> options) {
        if (recordingSince == 0) {
            recordingSince = System.currentTimeMillis();
            options.add("-XX:DumpLoadedClassList=" + classList);
        } else if (dump == null && System.currentTimeMillis() - recordingSince >= recordingMillis) {
            dump = startDump(java);
            failed = dump == null;
        } else if (dump != null && !dump.isAlive()) {
            ready = dump.exitValue() == 0 && Files.isRegularFile(archive);
            failed = !ready;
        }
    }

    /** Dumps the listed classes on a JVM of its own, in the background; null when it cannot start. */
    private Process startDump(String java) {
        try {
            // The recording JVM may still be writing, or was killed mid-line: only whole lines go to the dump.
            String listed = Files.readString(classList, StandardCharsets.UTF_8);
            Path complete = dir.resolve("classes-complete.lst");
            Files.writeString(complete, listed.substring(0, listed.lastIndexOf('\n') + 1), StandardCharsets.UTF_8);
            return new ProcessBuilder(java, "-Xshare:dump", "-XX:SharedClassListFile=" + complete,
                    "-XX:SharedArchiveFile=" + archive, "-cp", jarClassPath).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("dump.log").toFile()).start();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The class path with its directories packed into jars, in a temporary directory deleted at exit. */
    static SharedClassArchive packed(String classPath, long recordingMillis) {
        try {
            Path dir = Files.createTempDirectory("dedup-consumer-classes-");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(dir)));
            List<String> entries = new ArrayList<>();
            for (String entry : classPath.split(File.pathSeparator)) {
                Path path = Path.of(entry);
                entries.add(Files.isDirectory(path) ? jar(path, dir.resolve("classes-" + entries.size() + ".jar"))
                        : entry);
            }
            return new SharedClassArchive(dir, String.join(File.pathSeparator, entries), recordingMillis);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot pack the class path's directories into jars", e);
        }
    }

    private static String jar(Path directory, Path jar) throws IOException {
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file);
                Stream<Path> files = Files.walk(directory)) {
            for (Path path : (Iterable<Path>) files.filter(Files::isRegularFile).sorted()::iterator) {
                out.putNextEntry(new JarEntry(directory.relativize(path).toString().replace('\\', '/')));
                Files.copy(path, out);
                out.closeEntry();
            }
        }
        return jar.toString();
    }

    private static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // A temporary directory left behind.
        }
    }

    /** Waits for the dump, once started; false when none was started or it is still running. */
    boolean awaitDump(long seconds) throws InterruptedException {
        Process started;
        synchronized (this) {
            started = dump;
        }
        return started != null && started.waitFor(seconds, TimeUnit.SECONDS);
    }
}
