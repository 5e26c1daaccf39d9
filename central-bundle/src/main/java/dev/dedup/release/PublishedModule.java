package dev.dedup.release;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.w3c.dom.Element;

/**
 * A module the release publishes: every module of the root POM's reactor (and the root itself) whose POM does not
 * set {@code maven.deploy.skip} to true.
 *
 * @param directory the module's folder
 * @param groupId its group
 * @param artifactId its artifact
 * @param version its version
 * @param packaging {@code jar} or {@code pom}
 */
record PublishedModule(Path directory, String groupId, String artifactId, String version, String packaging) {

    /** The modules the root POM at {@code root} lists (its profiles' aside), itself first, less the unpublished. */
    static List<PublishedModule> read(Path root) throws IOException {
        List<PublishedModule> modules = new ArrayList<>();
        Element project = PomXml.parse(Files.readAllBytes(root.resolve("pom.xml")));
        addIfPublished(root, project, modules);
        for (Element module : PomXml.children(PomXml.child(project, "modules"), "module")) {
            Path directory = root.resolve(module.getTextContent().trim()).normalize();
            addIfPublished(directory, PomXml.parse(Files.readAllBytes(directory.resolve("pom.xml"))), modules);
        }
        return modules;
    }

    private static void addIfPublished(Path directory, Element project, List<PublishedModule> modules) {
        if ("true".equals(PomXml.text(PomXml.child(project, "properties"), "maven.deploy.skip"))) {
            return;
        }
        Element parent = PomXml.child(project, "parent");
        String groupId = PomXml.text(project, "groupId");
        String version = PomXml.text(project, "version");
        String packaging = PomXml.text(project, "packaging");
        modules.add(new PublishedModule(directory,
                groupId != null ? groupId : PomXml.text(parent, "groupId"),
                PomXml.text(project, "artifactId"),
                version != null ? version : PomXml.text(parent, "version"),
                packaging != null ? packaging : "jar"));
    }

    /** Whether the module has a jar (and so sources and javadoc), not only its POM. */
    boolean hasJar() {
        return "jar".equals(packaging);
    }

    /** Its folder in a Maven repository, such as {@code dev/dedup/dedup-api/0.1.0/}. */
    String repositoryFolder() {
        return groupId.replace('.', '/') + '/' + artifactId + '/' + version + '/';
    }

    /** The start of its files' names, such as {@code dedup-api-0.1.0}. */
    String fileStem() {
        return artifactId + '-' + version;
    }

    /** The names of the files a repository needs from it, before checksums and signatures. */
    List<String> fileNames() {
        String stem = fileStem();
        return hasJar()
                ? List.of(stem + ".pom", stem + ".jar", stem + "-sources.jar", stem + "-javadoc.jar")
                : List.of(stem + ".pom");
    }
}
