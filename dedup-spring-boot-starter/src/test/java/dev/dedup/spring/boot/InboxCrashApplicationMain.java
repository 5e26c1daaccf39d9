package dev.dedup.spring.boot;

import dev.dedup.tck.chaos.ChaosBoard;
import dev.dedup.tck.chaos.ConsumerProcess;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The application of {@link InboxCrashOnPostgresTest}: a {@code JdbcTemplate} service whose booking is
 * {@code @Idempotent(inTransaction = true)} on the starter's PostgreSQL store. Run as a JVM of its own
 * ({@link #main}), it books two ids when ready and stops each of them in a window for the driver's SIGKILL: one after
 * its row and its completion were written and before the commit, one just after the commit. The driver also runs it
 * in its own JVM, without the stops, for the retries.
 *
 * <p>Arguments: the board's file, then Boot's {@code --property=value} arguments ({@code crash.table},
 * {@code crash.before-commit}, {@code crash.after-commit}, the data source and the namespace).
 */
public final class InboxCrashApplicationMain {
    /** The board's slots: the calls held before their commit and after it, and failures. */
    static final int HELD_BEFORE_COMMIT = 1;
    static final int HELD_AFTER_COMMIT = 2;
    static final int ERRORS = 3;
    static final int SLOTS = 4;

    private InboxCrashApplicationMain() {}

    public static void main(String[] args) {
        // A test JVM that dies must not leave this one holding transactions: it ends with its parent.
        ProcessHandle.current().parent().ifPresent(parent -> parent.onExit()
                .thenRun(() -> Runtime.getRuntime().halt(3)));
        ChaosBoard board = ChaosBoard.open(Path.of(args[0]), SLOTS);
        try {
            new SpringApplicationBuilder(App.class)
                    .web(WebApplicationType.NONE)
                    .initializers(context -> context.getBeanFactory().registerSingleton("crashBoard", board))
                    .run(Arrays.copyOfRange(args, 1, args.length));
        } catch (Throwable e) {
            board.add(ERRORS, 1);
            ConsumerProcess.printError(e);
            Runtime.getRuntime().halt(1);
        }
    }

    /** A service with a database and the starter: nothing else of the test class path. */
    @SpringBootConfiguration
    @ImportAutoConfiguration({PropertyPlaceholderAutoConfiguration.class, JacksonAutoConfiguration.class,
            DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
            TransactionAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
            DedupStoreAutoConfiguration.class, DedupAnnotationAutoConfiguration.class})
    static class App {
        @Bean
        CrashBookings crashBookings(JdbcTemplate jdbc, @Value("${crash.table}") String table,
                ObjectProvider<ChaosBoard> board) {
            return new CrashBookings(jdbc, table, board.getIfAvailable());
        }

        /** In the crashing JVM: books the two ids, each on a thread of its own, once the application is ready. */
        @Bean
        ApplicationListener<ApplicationReadyEvent> bookWhenReady(CrashBookings bookings, ObjectProvider<ChaosBoard> board,
                @Value("${crash.before-commit:}") String beforeCommit,
                @Value("${crash.after-commit:}") String afterCommit) {
            return event -> {
                if (board.getIfAvailable() != null) {
                    CompletableFuture.runAsync(() -> bookings.book(beforeCommit));
                    CompletableFuture.runAsync(() -> bookings.book(afterCommit));
                }
            };
        }
    }

    /**
     * The booking: a row in the run's table, naming the process that wrote it. With a board (the crashing JVM), a
     * call whose id starts with {@code before-} or {@code after-} waits forever at that point of its commit.
     */
    public static class CrashBookings {
        private final JdbcTemplate jdbc;
        private final String insert;
        private final ChaosBoard board;
        private final String process = "pid-" + ProcessHandle.current().pid();

        CrashBookings(JdbcTemplate jdbc, String table, ChaosBoard board) {
            this.jdbc = jdbc;
            this.insert = "INSERT INTO " + table + " (id, process) VALUES (?, ?)";
            this.board = board;
        }

        @Transactional
        @Idempotent(key = "#id", scope = "crash", inTransaction = true)
        public String book(String id) {
            jdbc.update(insert, id, process);
            if (board != null && id.startsWith("before-")) {
                TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                    @Override
                    public void beforeCommit(boolean readOnly) {
                        holdAt(HELD_BEFORE_COMMIT);
                    }
                });
            } else if (board != null && id.startsWith("after-")) {
                TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                    @Override
                    public void afterCommit() {
                        holdAt(HELD_AFTER_COMMIT);
                    }
                });
            }
            return "booked " + id + " by " + process;
        }

        /** Says where it stands on the board, and waits there for the SIGKILL. */
        private void holdAt(int slot) {
            board.set(slot, 1);
            try {
                Thread.sleep(Long.MAX_VALUE);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
