package dev.dedup.benchmarks.report;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/** One line about the machine a run measured: cores, CPU, memory, JDK and OS. */
public final class Machine {
    private Machine() {}

    public static String describe() {
        StringBuilder line = new StringBuilder();
        line.append(Runtime.getRuntime().availableProcessors()).append(" cores");
        firstValue(Path.of("/proc/cpuinfo"), "model name", ':').ifPresent(cpu -> line.append(" (").append(cpu)
                .append(')'));
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            line.append(String.format(Locale.ROOT, ", %.0f GiB", os.getTotalMemorySize() / (double) (1L << 30)));
        }
        line.append(", JDK ").append(System.getProperty("java.vm.name")).append(' ')
                .append(System.getProperty("java.runtime.version"));
        line.append(", ").append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.version"))
                .append(' ').append(System.getProperty("os.arch"));
        firstValue(Path.of("/etc/os-release"), "PRETTY_NAME", '=').ifPresent(os -> line.append(" (").append(os)
                .append(')'));
        return line.toString();
    }

    /** The value of the first {@code name<separator>value} line of a Linux info file, if there is one. */
    private static Optional<String> firstValue(Path file, String name, char separator) {
        try {
            return Files.readAllLines(file).stream()
                    .filter(text -> text.startsWith(name) && text.indexOf(separator) > 0)
                    .map(text -> text.substring(text.indexOf(separator) + 1).trim().replace("\"", ""))
                    .findFirst();
        } catch (IOException | RuntimeException e) {
            return Optional.empty(); // not Linux, or not readable: the line just says less
        }
    }
}
