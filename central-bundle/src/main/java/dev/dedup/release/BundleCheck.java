package dev.dedup.release;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.w3c.dom.Element;

/**
 * Reads a bundle zip as the Central Portal would and lists, for every published module, what it holds and what is
 * missing: the POM, jar, sources and javadoc, their checksums (and signatures when signed), and the POM metadata the
 * Portal requires (name and description of its own; url, licence, scm and developers, its own or a parent's in the
 * bundle).
 */
final class BundleCheck {
    /** The checksums the Portal requires beside every file but a signature. */
    static final List<String> CHECKSUMS = List.of("md5", "sha1");

    /**
     * What the check found.
     *
     * @param lines one line per module: its files and its POM's metadata
     * @param problems each missing or wrong item, naming its module
     */
    record Report(List<String> lines, List<String> problems) {
    }

    private BundleCheck() {
    }

    static Report check(Path zip, List<PublishedModule> modules, boolean signed) throws IOException {
        Map<String, byte[]> entries = read(zip);
        List<String> lines = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (PublishedModule module : modules) {
            List<String> held = new ArrayList<>();
            List<String> metadata = List.of();
            for (String name : module.fileNames()) {
                String path = module.repositoryFolder() + name;
                byte[] content = entries.get(path);
                if (content == null) {
                    problems.add(module.artifactId() + ": no " + name);
                    continue;
                }
                held.add(kind(module, name));
                checkSidecars(module, path, content, entries, signed, problems);
                if (name.endsWith(".pom")) {
                    metadata = checkMetadata(module, PomXml.parse(content), entries, problems);
                } else {
                    checkJar(module, name, content, problems);
                }
            }
            lines.add(module.artifactId() + ": " + String.join(", ", held) + " (each with "
                    + String.join(", ", CHECKSUMS) + (signed ? ", asc" : "") + "); POM: " + String.join(", ", metadata));
        }
        for (String path : entries.keySet()) {
            if (modules.stream().noneMatch(module -> path.startsWith(module.repositoryFolder()))) {
                problems.add("not a published module's file: " + path);
            }
        }
        return new Report(lines, problems);
    }

    private static String kind(PublishedModule module, String name) {
        String rest = name.substring(module.fileStem().length());
        return rest.startsWith("-") ? rest.substring(1, rest.lastIndexOf('.')) : rest.substring(1);
    }

    private static void checkSidecars(PublishedModule module, String path, byte[] content, Map<String, byte[]> entries,
            boolean signed, List<String> problems) {
        String name = path.substring(module.repositoryFolder().length());
        for (String algorithm : CHECKSUMS) {
            byte[] sum = entries.get(path + '.' + algorithm);
            if (sum == null) {
                problems.add(module.artifactId() + ": no " + name + '.' + algorithm);
            } else if (!new String(sum, StandardCharsets.US_ASCII).trim()
                    .equals(Checksums.hex(algorithm, content))) {
                problems.add(module.artifactId() + ": " + name + '.' + algorithm + " does not match the file");
            }
        }
        if (signed && !entries.containsKey(path + ".asc")) {
            problems.add(module.artifactId() + ": no " + name + ".asc (signing was on)");
        }
    }

    private static void checkJar(PublishedModule module, String name, byte[] content, List<String> problems)
            throws IOException {
        String expected = name.endsWith("-sources.jar") ? ".java" : name.endsWith("-javadoc.jar") ? "index.html" : ".class";
        if (!holds(content, entry -> entry.endsWith(expected))) {
            problems.add(module.artifactId() + ": " + name + " holds no " + expected + " file");
        }
    }

    /** Checks the POM's metadata and answers the items it has. */
    private static List<String> checkMetadata(PublishedModule module, Element pom, Map<String, byte[]> entries,
            List<String> problems) throws IOException {
        List<String> present = new ArrayList<>();
        // Maven does not inherit a name; a description it does, but a module's own says what the module is.
        for (String own : List.of("name", "description")) {
            if (PomXml.text(pom, own) == null) {
                problems.add(module.artifactId() + ": the POM has no <" + own + "> of its own");
            } else {
                present.add(own);
            }
        }
        Map<String, Predicate<Element>> inherited = new LinkedHashMap<>();
        inherited.put("url", project -> PomXml.text(project, "url") != null);
        inherited.put("licenses", project -> PomXml.children(PomXml.child(project, "licenses"), "license").stream()
                .anyMatch(license -> PomXml.text(license, "name") != null && PomXml.text(license, "url") != null));
        inherited.put("scm", project -> PomXml.text(PomXml.child(project, "scm"), "url") != null
                && PomXml.text(PomXml.child(project, "scm"), "connection") != null);
        inherited.put("developers", project -> PomXml.children(PomXml.child(project, "developers"), "developer")
                .stream().anyMatch(developer -> PomXml.text(developer, "name") != null));
        for (Map.Entry<String, Predicate<Element>> item : inherited.entrySet()) {
            if (inLineage(module, pom, item.getValue(), entries, problems)) {
                present.add(item.getKey());
            } else {
                problems.add(module.artifactId() + ": the POM has no <" + item.getKey() + ">, nor has a parent");
            }
        }
        return present;
    }

    /** Whether {@code pom} or one of its parents in the bundle passes {@code test}. */
    private static boolean inLineage(PublishedModule module, Element pom, Predicate<Element> test,
            Map<String, byte[]> entries, List<String> problems) throws IOException {
        for (Element project = pom; project != null; ) {
            if (test.test(project)) {
                return true;
            }
            Element parent = PomXml.child(project, "parent");
            if (parent == null) {
                return false;
            }
            String groupId = PomXml.text(parent, "groupId");
            String artifactId = PomXml.text(parent, "artifactId");
            String version = PomXml.text(parent, "version");
            byte[] parentPom = entries.get(groupId.replace('.', '/') + '/' + artifactId + '/' + version + '/'
                    + artifactId + '-' + version + ".pom");
            if (parentPom == null) {
                String problem = module.artifactId() + ": its parent " + groupId + ':' + artifactId + ':' + version
                        + " is not in the bundle";
                if (!problems.contains(problem)) {
                    problems.add(problem);
                }
                return false;
            }
            project = PomXml.parse(parentPom);
        }
        return false;
    }

    private static boolean holds(byte[] jar, Predicate<String> entryName) throws IOException {
        try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(jar))) {
            for (ZipEntry entry = in.getNextEntry(); entry != null; entry = in.getNextEntry()) {
                if (entryName.test(entry.getName())) {
                    return true;
                }
            }
        }
        return false;
    }

    private static Map<String, byte[]> read(Path zip) throws IOException {
        Map<String, byte[]> entries = new LinkedHashMap<>();
        try (InputStream file = Files.newInputStream(zip); ZipInputStream in = new ZipInputStream(file)) {
            for (ZipEntry entry = in.getNextEntry(); entry != null; entry = in.getNextEntry()) {
                if (!entry.isDirectory()) {
                    entries.put(entry.getName(), in.readAllBytes());
                }
            }
        }
        return entries;
    }
}
