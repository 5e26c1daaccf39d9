package dev.dedup.examples.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.tck.TestServers;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The transactional inbox demo on the real PostgreSQL: crashes before and after COMMIT, exact stock. */
class InventoryInboxDemoTest {

    @Test
    @DisplayName("with crashes before and after COMMIT and duplicate publishes, stock and reservations are exact")
    void stockIsExact() throws Exception {
        String url = TestServers.require("PostgreSQL 15", "DEDUP_TEST_POSTGRES_URL", null);

        InventoryInboxDemo.Result result = InventoryInboxDemo.run(url, 500, 7);

        assertThat(result.crashesBeforeCommit()).isPositive();
        assertThat(result.crashesAfterCommit()).isPositive();
        assertThat(result.duplicatePublishes()).isPositive();
        assertThat(result.stock()).isEqualTo(result.expected());
        assertThat(result.reservations()).isEqualTo(result.expected());
        assertThat(result.exact()).isTrue();
    }
}
