package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.spring.boot.InboxCrashApplicationMain.CrashBookings;
import dev.dedup.tck.chaos.ConsumerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A process SIGKILLed in the middle of {@code @Idempotent(inTransaction = true)} calls, then the retries: an
 * application ({@link InboxCrashApplicationMain}, a JVM of its own) books two ids and is killed while one call has
 * written its row and its completion but not committed, and the other has just committed. The retries, from another
 * application on the same database: the first runs once (0 lost), the second replays the dead process's result
 * (0 doubled).
 */
class InboxCrashOnPostgresTest {

    @Test
    @Timeout(120)
    void aProcessKilledBeforeOrAfterItsCommitLeavesOneRowPerBookingAfterTheRetries() throws Exception {
        String run = Servers.unique("inbox_crash").replace('-', '_');
        String table = run + "_rows";
        String beforeCommit = "before-" + run;
        String afterCommit = "after-" + run;
        Path dir = Files.createTempDirectory("inbox-crash-");
        Path log = dir.resolve("application.log");
        List<String> properties = List.of("--spring.datasource.url=" + Servers.postgresJdbcUrl(),
                "--dedup.namespace=" + run, "--dedup.store.create-schema=true", "--crash.table=" + table);
        try (ConfigurableApplicationContext retries = start(properties)) {
            JdbcTemplate jdbc = retries.getBean(JdbcTemplate.class);
            jdbc.execute("CREATE TABLE " + table + " (id text NOT NULL, process text NOT NULL)");

            ConsumerProcess crashing = ConsumerProcess.start("crashing", InboxCrashApplicationMain.class,
                    dir.resolve("crashing.board"), InboxCrashApplicationMain.SLOTS, log,
                    concat(properties, "--crash.before-commit=" + beforeCommit,
                            "--crash.after-commit=" + afterCommit));
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (crashing.board().get(InboxCrashApplicationMain.HELD_BEFORE_COMMIT) == 0
                    || crashing.board().get(InboxCrashApplicationMain.HELD_AFTER_COMMIT) == 0) {
                assertThat(crashing.isAlive()).as(ConsumerProcess.firstError(log)).isTrue();
                assertThat(System.nanoTime()).as("both calls held within 60 s").isLessThan(deadline);
                Thread.sleep(20);
            }
            assertThat(rows(jdbc, table)).as("committed before the kill")
                    .containsExactly(Map.entry(afterCommit, "1"));
            crashing.kill();

            CrashBookings bookings = retries.getBean(CrashBookings.class);
            String pid = "pid-" + ProcessHandle.current().pid();
            assertThat(bookings.book(beforeCommit)).isEqualTo("booked " + beforeCommit + " by " + pid);
            assertThat(bookings.book(afterCommit))
                    .isEqualTo("booked " + afterCommit + " by " + writer(jdbc, table, afterCommit));
            assertThat(bookings.book(beforeCommit)).isEqualTo("booked " + beforeCommit + " by " + pid);

            // 0 lost, 0 doubled: one row per booking, the first by the retry, the second by the dead process.
            assertThat(rows(jdbc, table)).containsOnly(Map.entry(beforeCommit, "1"), Map.entry(afterCommit, "1"));
            assertThat(writer(jdbc, table, beforeCommit)).isEqualTo(pid);
            assertThat(writer(jdbc, table, afterCommit)).isNotEqualTo(pid);
            jdbc.execute("DROP TABLE " + table);
        }
    }

    private static ConfigurableApplicationContext start(List<String> properties) {
        return new SpringApplicationBuilder(InboxCrashApplicationMain.App.class).web(WebApplicationType.NONE)
                .run(properties.toArray(String[]::new));
    }

    private static List<String> concat(List<String> properties, String... more) {
        return Stream.concat(properties.stream(), Arrays.stream(more)).toList();
    }

    /** {@return the committed rows, as id to how many} */
    private static Map<String, String> rows(JdbcTemplate jdbc, String table) {
        Map<String, String> rows = new TreeMap<>();
        jdbc.query("SELECT id, count(*) AS n FROM " + table + " GROUP BY id",
                row -> {
                    rows.put(row.getString("id"), row.getString("n"));
                });
        return rows;
    }

    /** {@return the process that wrote the row of {@code id}} */
    private static String writer(JdbcTemplate jdbc, String table, String id) {
        return jdbc.queryForObject("SELECT process FROM " + table + " WHERE id = ?", String.class, id);
    }
}
