package dev.dedup.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SpellingTest {

    @Test
    @DisplayName("a swap of two adjacent characters is one edit, as are an insertion, a deletion and a substitution")
    void countsEdits() {
        assertThat(Spelling.distance("namepsace", "namespace")).isEqualTo(1);
        assertThat(Spelling.distance("tabel", "table")).isEqualTo(1);
        assertThat(Spelling.distance("timout", "timeout")).isEqualTo(1);
        assertThat(Spelling.distance("timeouts", "timeout")).isEqualTo(1);
        assertThat(Spelling.distance("kitten", "sitting")).isEqualTo(3);
        assertThat(Spelling.distance("", "abc")).isEqualTo(3);
    }

    @Test
    @DisplayName("suggests the nearest names first, ignoring case, and nothing when none is close")
    void suggestsNearest() {
        List<String> schemes = List.of("memory", "postgres", "postgresql", "jdbc:postgresql", "redis", "rediss");

        assertThat(Spelling.closest("postgress", schemes)).containsExactly("postgres", "postgresql");
        assertThat(Spelling.closest("memroy", schemes)).containsExactly("memory");
        assertThat(Spelling.closest("hashtag", List.of("hashTag", "prefix"))).containsExactly("hashTag");
        assertThat(Spelling.closest("cassandra", schemes)).isEmpty();
        assertThat(Spelling.didYouMean("redsi", schemes)).isEqualTo(" Did you mean redis?");
        assertThat(Spelling.didYouMean("cassandra", schemes)).isEmpty();
    }
}
