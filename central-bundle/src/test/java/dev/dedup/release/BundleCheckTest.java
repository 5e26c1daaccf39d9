package dev.dedup.release;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The check names each missing or wrong part of a bundle, and passes a complete one. */
class BundleCheckTest {
    private static final PublishedModule PARENT =
            new PublishedModule(Path.of("."), "dev.example", "example-parent", "1.0", "pom");
    private static final PublishedModule LIBRARY =
            new PublishedModule(Path.of("library"), "dev.example", "example-library", "1.0", "jar");
    private static final String PARENT_POM = "<project><artifactId>example-parent</artifactId>"
            + "<name>parent</name><description>the parent</description><url>https://example.invalid</url>"
            + "<licenses><license><name>Apache-2.0</name><url>https://example.invalid/licence</url></license></licenses>"
            + "<scm><url>https://example.invalid/scm</url><connection>scm:git:https://example.invalid</connection></scm>"
            + "<developers><developer><name>maintainers</name></developer></developers></project>";
    private static final String LIBRARY_POM = "<project><parent><groupId>dev.example</groupId>"
            + "<artifactId>example-parent</artifactId><version>1.0</version></parent>"
            + "<artifactId>example-library</artifactId><name>library</name><description>the library</description>"
            + "</project>";

    @TempDir
    Path folder;

    @Test
    void completeBundlePassesAndListsEachModule() throws IOException {
        Map<String, byte[]> files = complete();

        BundleCheck.Report report = check(files, false);

        assertThat(report.problems()).isEmpty();
        assertThat(report.lines()).containsExactly(
                "example-parent: pom (each with md5, sha1); POM: name, description, url, licenses, scm, developers",
                "example-library: pom, jar, sources, javadoc (each with md5, sha1); POM: name, description, url,"
                        + " licenses, scm, developers");
    }

    @Test
    void namesEveryMissingOrWrongPart() throws IOException {
        Map<String, byte[]> files = complete();
        String library = "dev/example/example-library/1.0/example-library-1.0";
        files.remove(library + "-sources.jar");
        files.put(library + "-javadoc.jar", jar("overview.html"));
        files.put(library + "-javadoc.jar.md5", checksum("md5", files.get(library + "-javadoc.jar")));
        files.put(library + "-javadoc.jar.sha1", checksum("sha1", files.get(library + "-javadoc.jar")));
        files.put(library + ".jar.sha1", "0000".getBytes(StandardCharsets.US_ASCII));
        files.remove(library + ".jar.md5");
        putWithChecksums(files, library + ".pom", LIBRARY_POM.replace("<description>the library</description>", ""));
        putWithChecksums(files, "dev/example/example-parent/1.0/example-parent-1.0.pom",
                PARENT_POM.replaceAll("<scm>.*</scm>", ""));
        files.put("dev/example/example-benchmarks/1.0/example-benchmarks-1.0.jar", jar("Bench.class"));

        BundleCheck.Report report = check(files, true);

        assertThat(report.problems()).containsExactlyInAnyOrder(
                "example-parent: no example-parent-1.0.pom.asc (signing was on)",
                "example-parent: the POM has no <scm>, nor has a parent",
                "example-library: no example-library-1.0.pom.asc (signing was on)",
                "example-library: the POM has no <description> of its own",
                "example-library: the POM has no <scm>, nor has a parent",
                "example-library: no example-library-1.0.jar.md5",
                "example-library: example-library-1.0.jar.sha1 does not match the file",
                "example-library: no example-library-1.0.jar.asc (signing was on)",
                "example-library: no example-library-1.0-sources.jar",
                "example-library: example-library-1.0-javadoc.jar holds no index.html file",
                "example-library: no example-library-1.0-javadoc.jar.asc (signing was on)",
                "not a published module's file: dev/example/example-benchmarks/1.0/example-benchmarks-1.0.jar");
    }

    @Test
    void aParentOutsideTheBundleIsNamed() throws IOException {
        Map<String, byte[]> files = complete();
        files.keySet().removeIf(path -> path.startsWith("dev/example/example-parent/"));

        BundleCheck.Report report = check(files, false);

        assertThat(report.problems()).contains(
                "example-parent: no example-parent-1.0.pom",
                "example-library: its parent dev.example:example-parent:1.0 is not in the bundle",
                "example-library: the POM has no <url>, nor has a parent");
    }

    private BundleCheck.Report check(Map<String, byte[]> files, boolean signed) throws IOException {
        Path zip = folder.resolve("bundle.zip");
        try (OutputStream out = Files.newOutputStream(zip)) {
            out.write(zip(files));
        }
        return BundleCheck.check(zip, List.of(PARENT, LIBRARY), signed);
    }

    private static Map<String, byte[]> complete() throws IOException {
        Map<String, byte[]> files = new LinkedHashMap<>();
        putWithChecksums(files, "dev/example/example-parent/1.0/example-parent-1.0.pom", PARENT_POM);
        String library = "dev/example/example-library/1.0/example-library-1.0";
        putWithChecksums(files, library + ".pom", LIBRARY_POM);
        putWithChecksums(files, library + ".jar", jar("dev/example/Library.class"));
        putWithChecksums(files, library + "-sources.jar", jar("dev/example/Library.java"));
        putWithChecksums(files, library + "-javadoc.jar", jar("index.html"));
        return files;
    }

    private static void putWithChecksums(Map<String, byte[]> files, String path, String text) {
        putWithChecksums(files, path, text.getBytes(StandardCharsets.UTF_8));
    }

    private static void putWithChecksums(Map<String, byte[]> files, String path, byte[] content) {
        files.put(path, content);
        for (String algorithm : BundleCheck.CHECKSUMS) {
            files.put(path + '.' + algorithm, checksum(algorithm, content));
        }
    }

    private static byte[] checksum(String algorithm, byte[] content) {
        return Checksums.hex(algorithm, content).getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] jar(String entry) throws IOException {
        return zip(Map.of(entry, new byte[] {1}));
    }

    private static byte[] zip(Map<String, byte[]> files) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
            for (Map.Entry<String, byte[]> file : files.entrySet()) {
                zip.putNextEntry(new ZipEntry(file.getKey()));
                zip.write(file.getValue());
                zip.closeEntry();
            }
        }
        return bytes.toByteArray();
    }
}
