package dev.dedup.examples.readme;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Every Java and XML block in the README (and in the docs pages that continue it, {@link #PAGES}) is a region of a
 * file the build compiles (the classes in this package) or uses (the consumer project's pom), so a snippet that
 * stops compiling, or drifts from its source, fails here.
 * A region runs from a {@code // readme:name} (or {@code <!-- readme:name -->}) line to the next {@code // end}.
 */
class ReadmeSnippetsTest {
    private static final Path ROOT = Path.of("..");
    /** The pages whose code blocks users copy as they are; the store pages show builder calls in context. */
    static final List<String> PAGES = List.of("README.md", "docs/consumer.md", "docs/spi.md",
            "docs/micrometer.md", "docs/rabbitmq.md", "docs/spring-boot.md", "docs/outbox.md", "docs/sqs.md");
    private static final Pattern FENCE = Pattern.compile("(?ms)^```(java|xml)\\n(.*?)^```$");
    private static final Pattern REGION = Pattern.compile(
            "(?ms)^[ \\t]*(?://|<!--) readme:([\\w-]+)(?: -->)?\\n(.*?)^[ \\t]*(?://|<!--) end(?: -->)?$");

    @Test
    @DisplayName("every Java and XML block in the README and its pages is a compiled region, and every region is shown")
    void readmeBlocksAreCompiledSources() throws IOException {
        Map<String, String> regions = regions();
        List<String> blocks = new ArrayList<>();
        for (String page : PAGES) {
            blocks.addAll(blocks(Files.readString(ROOT.resolve(page))));
        }

        assertThat(regions).as("regions found").isNotEmpty();
        for (String block : blocks) {
            assertThat(regions.values()).as("a compiled source region equal to this block:\n" + block)
                    .contains(block);
        }
        for (Map.Entry<String, String> region : regions.entrySet()) {
            assertThat(blocks).as("a block in " + PAGES + " for region " + region.getKey()).contains(region.getValue());
        }
    }

    private static List<String> blocks(String markdown) {
        List<String> blocks = new ArrayList<>();
        Matcher fence = FENCE.matcher(markdown);
        while (fence.find()) {
            blocks.add(fence.group(2).stripTrailing());
        }
        return blocks;
    }

    private static Map<String, String> regions() throws IOException {
        List<Path> sources = new ArrayList<>();
        try (Stream<Path> files = Files.list(ROOT.resolve("examples/src/main/java/dev/dedup/examples/readme"))) {
            files.filter(file -> file.toString().endsWith(".java")).sorted().forEach(sources::add);
        }
        sources.add(ROOT.resolve("examples/consumer-project/pom.xml"));
        sources.add(ROOT.resolve("examples/spring-boot-app/pom.xml"));
        sources.add(ROOT.resolve("examples/spring-boot3-app/pom.xml"));
        sources.add(ROOT.resolve("examples/spring-boot-app/src/main/java/com/example/payments/Refunds.java"));
        sources.add(ROOT.resolve("dedup-spring-boot-starter/src/test/java/dev/dedup/spring/boot/Orders.java"));
        sources.add(ROOT.resolve("dedup-spring-boot-starter/src/test/java/dev/dedup/spring/boot/Wallet.java"));
        Map<String, String> regions = new LinkedHashMap<>();
        for (Path source : sources) {
            Matcher region = REGION.matcher(Files.readString(source));
            while (region.find()) {
                String previous = regions.put(region.group(1), region.group(2).stripTrailing().stripIndent());
                assertThat(previous).as("region " + region.group(1) + " defined twice").isNull();
            }
        }
        return regions;
    }
}
