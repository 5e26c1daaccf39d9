package dev.dedup.release;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * Lays out the published modules' files as a Maven repository (the folder the release profile names), adds their
 * checksums, zips the folder for the Central Portal's upload, then checks the zip with {@link BundleCheck}. Run by
 * the release profile once every published module has been packaged (and signed, when a key was named). It never
 * uploads anything.
 */
public final class CentralBundle {
    private CentralBundle() {
    }

    /**
     * Makes and checks the bundle.
     *
     * @param args the reactor's root folder, the bundle folder (the zip goes beside it), the build's output time stamp
     *             (ISO-8601, for reproducible zip entries) and whether signing was skipped ({@code true|false})
     * @throws IOException when a file cannot be read or written
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 4) {
            throw new IllegalArgumentException("expected 4 arguments (root folder, bundle folder, output timestamp,"
                    + " signing skipped), got " + List.of(args));
        }
        Path root = Path.of(args[0]).normalize();
        Path folder = Path.of(args[1]).normalize();
        Instant time = timestamp(args[2]);
        boolean signed = !Boolean.parseBoolean(args[3]);

        List<PublishedModule> modules = PublishedModule.read(root);
        layOut(modules, folder, signed);
        Path zip = folder.resolveSibling(folder.getFileName() + ".zip");
        zip(folder, zip, time);

        BundleCheck.Report report = BundleCheck.check(zip, modules, signed);
        System.out.println("Central bundle: " + zip + " (" + modules.size() + " modules)");
        report.lines().forEach(line -> System.out.println("  " + line));
        if (modules.stream().anyMatch(module -> module.version().endsWith("-SNAPSHOT"))) {
            System.out.println("A -SNAPSHOT version: the Central Portal takes release versions only (set the release"
                    + " version first, docs/development.md, \"Releasing\").");
        }
        if (!signed) {
            System.out.println("Signing skipped: no GPG key configured (-Dgpg.keyname=<key id>); the Central Portal"
                    + " refuses a bundle without .asc signatures.");
        }
        if (!report.problems().isEmpty()) {
            throw new IllegalStateException("The Central bundle is incomplete:\n  "
                    + String.join("\n  ", report.problems()));
        }
    }

    private static Instant timestamp(String value) {
        try {
            return Instant.parse(value);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("project.build.outputTimestamp must be an ISO-8601 instant such as"
                    + " 2026-12-03T00:00:00Z, got '" + value + "'", e);
        }
    }

    /** Copies each module's files into its repository folder, with checksums; a file it lacks is left for the check. */
    private static void layOut(List<PublishedModule> modules, Path folder, boolean signed) throws IOException {
        deleteRecursively(folder);
        for (PublishedModule module : modules) {
            Path into = Files.createDirectories(folder.resolve(module.repositoryFolder()));
            Path target = module.directory().resolve("target");
            for (String name : module.fileNames()) {
                // The POM a repository serves is the module's own pom.xml, as deploy would upload it.
                Path source = name.endsWith(".pom") ? module.directory().resolve("pom.xml") : target.resolve(name);
                if (!Files.isRegularFile(source)) {
                    continue;
                }
                byte[] content = Files.readAllBytes(source);
                Files.write(into.resolve(name), content);
                for (String algorithm : BundleCheck.CHECKSUMS) {
                    Files.writeString(into.resolve(name + '.' + algorithm), Checksums.hex(algorithm, content),
                            StandardCharsets.US_ASCII);
                }
                // gpg signs in target/, the POM as a copy named like the others; without a key, old ones are stale.
                Path signature = target.resolve(name + ".asc");
                if (signed && Files.isRegularFile(signature)) {
                    Files.copy(signature, into.resolve(name + ".asc"), StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    /** Zips the folder's files in name order, each stamped with {@code time}, so that the same files give the same zip. */
    private static void zip(Path folder, Path zip, Instant time) throws IOException {
        LocalDateTime stamp = LocalDateTime.ofInstant(time, ZoneOffset.UTC);
        List<Path> files = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(folder)) {
            walk.filter(Files::isRegularFile).forEach(files::add);
        }
        files.sort(Comparator.comparing(file -> folder.relativize(file).toString()));
        try (OutputStream out = Files.newOutputStream(zip); ZipOutputStream zipped = new ZipOutputStream(out)) {
            for (Path file : files) {
                ZipEntry entry = new ZipEntry(folder.relativize(file).toString().replace('\\', '/'));
                entry.setTimeLocal(stamp);
                zipped.putNextEntry(entry);
                Files.copy(file, zipped);
                zipped.closeEntry();
            }
        }
    }

    private static void deleteRecursively(Path folder) throws IOException {
        if (!Files.exists(folder)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(folder)) {
            walk.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.delete(path);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }
}
