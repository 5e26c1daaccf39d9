package dev.dedup.tck.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A consumer running as a JVM of its own, on the test's class path, that the driver can kill like a crashing host:
 * {@link #kill()} freezes it (SIGSTOP), reads where it stood from its {@link ChaosBoard}, and ends it with SIGKILL,
 * so no shutdown hook, finally block or client close runs. Linux and macOS only (the {@code kill} command).
 */
public final class ConsumerProcess {
    private static final String ERROR_MARK = "=== consumer error ===";
    private final Process process;
    private final ChaosBoard board;
    private final String name;

    private ConsumerProcess(String name, Process process, ChaosBoard board) {
        this.name = name;
        this.process = process;
        this.board = board;
    }

    /**
     * Starts {@code mainClass} in a new JVM with the test's class path (its directories packed into jars, and
     * the classes shared between the consumers' JVMs once the first has listed them) and environment; its output
     * goes to {@code log}. The board's file is passed as the first argument, before {@code arguments}.
     *
     * @param name the consumer's name, for messages
     * @param mainClass the consumer's main class
     * @param board the consumer's board file, created here
     * @param boardSize the number of slots on the board
     * @param log where the consumer's standard output and error go
     * @param arguments the main class's further arguments
     * @return the running consumer
     */
    public static ConsumerProcess start(String name, Class<?> mainClass, Path board, int boardSize, Path log,
            List<String> arguments) {
        ChaosBoard figures = ChaosBoard.open(board, boardSize);
        List<String> command = new ArrayList<>();
        String java = ProcessHandle.current().info().command().orElse("java");
        command.add(java);
        // A small, quickly started JVM: the driver restarts consumers every second or two.
        command.addAll(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k"));
        command.addAll(SharedClassArchive.forClassPath(System.getProperty("java.class.path")).jvmOptions(java));
        command.addAll(List.of(mainClass.getName(), board.toString()));
        command.addAll(arguments);
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            return new ConsumerProcess(name, process, figures);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the consumer process " + name, e);
        }
    }

    /** The work of a consumer's {@code main}, given its board and its {@code key=value} arguments. */
    @FunctionalInterface
    public interface Body {
        /**
         * Runs the consumer until the driver kills it.
         *
         * @param board the consumer's board
         * @param settings the arguments after the board's file, by key
         * @throws Exception when the consumer cannot go on: counted and printed as an error
         */
        void run(ChaosBoard board, Map<String, String> settings) throws Exception;
    }

    /**
     * A consumer's {@code main}, as {@link #start} calls it: opens the board (its file is the first argument) with
     * the phase set to {@code startingPhase}, reads the further {@code key=value} arguments, and runs {@code body}.
     * An exception or error that escapes it is counted in {@code errorSlot} and printed with {@link #printError};
     * the JVM then halts with 1, without shutdown hooks (0 when {@code body} returns).
     *
     * @param args the main method's arguments
     * @param boardSize the number of slots on the board
     * @param errorSlot the counter of fatal errors
     * @param startingPhase the phase until the consumer has connected
     * @param body the consumer's work
     */
    public static void runMain(String[] args, int boardSize, int errorSlot, long startingPhase, Body body) {
        ChaosBoard board = ChaosBoard.open(Path.of(args[0]), boardSize);
        board.set(ChaosBoard.PHASE, startingPhase);
        Map<String, String> settings = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String[] pair = args[i].split("=", 2);
            settings.put(pair[0], pair[1]);
        }
        try {
            body.run(board, settings);
        } catch (Throwable e) {
            board.add(errorSlot, 1);
            printError(e);
            Runtime.getRuntime().halt(1);
        }
        Runtime.getRuntime().halt(0);
    }

    /** {@return the consumer's name} */
    public String name() {
        return name;
    }

    /** {@return the consumer's board, readable after its death} */
    public ChaosBoard board() {
        return board;
    }

    /** {@return whether the process still runs} */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** {@return the process's exit code; only once it has ended} */
    public int exitValue() {
        return process.exitValue();
    }

    /**
     * Freezes the process, reads its phase, and kills it with SIGKILL.
     *
     * @return the phase the process was in when it was frozen
     * @throws InterruptedException if interrupted while waiting for the process to end
     */
    public long kill() throws InterruptedException {
        signal("STOP");
        long phase = board.get(ChaosBoard.PHASE);
        process.destroyForcibly();      // SIGKILL; a stopped process dies of it too
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + " (pid " + process.pid() + ") did not die of SIGKILL in 30 s");
        }
        return phase;
    }

    /**
     * Asks the process to finish (SIGTERM) and waits for it.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    public void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    /**
     * Writes a consumer's fatal error to its log, marked so that {@link #firstError} finds it among the clients' own
     * log lines. For the consumer's main class, before it halts.
     *
     * @param error what ended the consumer
     */
    public static void printError(Throwable error) {
        System.err.println(ERROR_MARK);
        error.printStackTrace();
        System.err.flush();
    }

    /**
     * The first fatal error the consumers wrote to their shared log with {@link #printError}, for an assertion's
     * message: a CI run keeps the test's output, not the log file it names.
     *
     * @param log the consumers' log
     * @return the error's first lines (at most 25), or a note that the log holds none
     */
    public static String firstError(Path log) {
        List<String> lines;
        try {
            lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
        } catch (IOException e) {
            return "(the log " + log + " cannot be read: " + e + ")";
        }
        int mark = lines.indexOf(ERROR_MARK);
        if (mark < 0) {
            return "(no consumer error in " + log + ")";
        }
        return "first consumer error in " + log + ":\n"
                + String.join("\n", lines.subList(mark + 1, Math.min(mark + 26, lines.size())));
    }

    private void signal(String signal) throws InterruptedException {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                    .redirectErrorStream(true).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0 && process.isAlive()) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed for " + name);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run kill -" + signal, e);
        }
    }
}
