package dev.dedup.spring.boot;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.KeyRecord;
import dev.dedup.tck.chaos.ChaosBoard;
import dev.dedup.tck.chaos.ConsumerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.util.backoff.FixedBackOff;

/**
 * The Boot application of {@link SpringChaosTest}, run as a JVM of its own: {@link Idempotent} on a
 * {@code @KafkaListener} method and on a {@code @RabbitListener} method, on the starter's store (PostgreSQL, from the
 * {@code DataSource}) and the starter's error handling. Each method's effect is a row in the run's effects table,
 * committed on its own, outside the store: a death after that commit and before the completion is stored leaves the
 * key to lapse with its lease, and the redelivery runs the method again, the documented double.
 *
 * <p>Arguments: the board's file, then Boot's {@code --property=value} arguments. The board (a memory-mapped file
 * the driver reads after a SIGKILL) holds the phase (starting until the application is ready) and counters; {@link
 * #WINDOW} is how many calls are between their effect's commit and their completion, so the driver knows, for each
 * kill, how many doubles it may cause.
 */
public final class ChaosApplicationMain {
    /** The phase slot's values: the application is starting, or ready. */
    static final long STARTING = 1;
    static final long READY = 2;

    /** Method bodies run, by broker. */
    static final int KAFKA_RUNS = 1;
    static final int RABBIT_RUNS = 2;
    /** Calls inside the method body, before the effect's commit is sent. */
    static final int HANDLING = 3;
    /** Calls from the effect's commit until the store answered the completion (a death there may double). */
    static final int WINDOW = 4;
    /** Completions the store refused or did not answer ({@code LeaseLost}): each effect may run again. */
    static final int LEASE_LOST = 5;
    /** Kafka records the error handler gave up on (its recoverer): none may be. */
    static final int KAFKA_RECOVERED = 6;
    static final int STARTS = 7;
    static final int START_MILLIS = 8;
    static final int ERRORS = 9;
    static final int SLOTS = 10;

    private ChaosApplicationMain() {}

    public static void main(String[] args) {
        // A test JVM that dies (its Surefire fork killed) must not leave this one consuming: it ends with its parent.
        ProcessHandle.current().parent().ifPresent(parent -> parent.onExit()
                .thenRun(() -> Runtime.getRuntime().halt(3)));
        ChaosBoard board = ChaosBoard.open(Path.of(args[0]), SLOTS);
        board.set(ChaosBoard.PHASE, STARTING);
        try {
            new SpringApplicationBuilder(App.class)
                    .web(WebApplicationType.NONE)
                    .initializers(context -> context.getBeanFactory().registerSingleton("chaosBoard", board))
                    .run(Arrays.copyOfRange(args, 1, args.length));
        } catch (Throwable e) {
            board.add(ERRORS, 1);
            ConsumerProcess.printError(e);
            Runtime.getRuntime().halt(1);
        }
    }

    /**
     * A service with a database, Kafka and RabbitMQ: their auto-configuration and the starter's. The rest of the test
     * class path (web, actuator, MongoDB, Redis) is left out, which halves each JVM's start on 2 cores.
     */
    @SpringBootConfiguration
    @ImportAutoConfiguration({PropertyPlaceholderAutoConfiguration.class, SslAutoConfiguration.class,
            TaskExecutionAutoConfiguration.class, TaskSchedulingAutoConfiguration.class,
            JacksonAutoConfiguration.class, DataSourceAutoConfiguration.class, KafkaAutoConfiguration.class,
            RabbitAutoConfiguration.class, DedupStoreAutoConfiguration.class, DedupAnnotationAutoConfiguration.class,
            DedupKafkaAutoConfiguration.class, DedupRabbitListenerAutoConfiguration.class})
    static class App {
        @Bean
        Effects effects(DataSource dataSource, ChaosBoard board, @Value("${chaos.table}") String table) {
            return new Effects(dataSource, board, table);
        }

        @Bean
        Listeners listeners(Effects effects) {
            return new Listeners(effects);
        }

        /**
         * The starter's error handler, built as the docs tell an application with a recoverer of its own: here the
         * recoverer counts, since a recovered record would be committed past without its effect.
         */
        @Bean
        IdempotentKafkaErrorHandler kafkaErrorHandler(ChaosBoard board) {
            return new IdempotentKafkaErrorHandler((record, failure) -> {
                board.add(KAFKA_RECOVERED, 1);
                ConsumerProcess.printError(failure);
            }, new FixedBackOff(100, 9), Duration.ofSeconds(1));
        }

        /** Watches the starter's store bean, whatever wraps it, to close the window when the completion is answered. */
        @Bean
        static BeanPostProcessor watchStore(ChaosBoard board) {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String name) {
                    return bean instanceof DedupStore store && !(bean instanceof WatchedStore)
                            ? new WatchedStore(store, board) : bean;
                }
            };
        }

        @Bean
        ApplicationListener<ApplicationReadyEvent> ready(ChaosBoard board) {
            return event -> {
                board.add(STARTS, 1);
                board.add(START_MILLIS, ProcessHandle.current().info().startInstant()
                        .map(start -> Duration.between(start, Instant.now()).toMillis()).orElse(0L));
                board.set(ChaosBoard.PHASE, READY);
            };
        }
    }

    /** The two entry points under test. Public methods: the listeners are called through the starter's proxy. */
    public static class Listeners {
        private final Effects effects;

        Listeners(Effects effects) {
            this.effects = effects;
        }

        @KafkaListener(topics = "${chaos.topic}", groupId = "${chaos.topic}")
        @Idempotent(key = "new String(#record.headers().lastHeader('message-id').value())", scope = "chaos-kafka")
        public void onRecord(ConsumerRecord<String, String> record) {
            effects.apply("kafka", record.value(), KAFKA_RUNS);
        }

        @RabbitListener(queues = "${chaos.queue}")
        @Idempotent(key = "#message.messageProperties.messageId", scope = "chaos-rabbit")
        public void onMessage(Message message) {
            effects.apply("rabbit", new String(message.getBody(), StandardCharsets.UTF_8), RABBIT_RUNS);
        }
    }

    /** The effect: a row per run of a method body, no unique constraint, so a double is a second row. */
    static final class Effects {
        /** Set on a listener thread from its effect's commit until its completion is answered. */
        static final ThreadLocal<Boolean> IN_WINDOW = new ThreadLocal<>();

        private final DataSource dataSource;
        private final ChaosBoard board;
        private final String insert;
        private final String process = "pid-" + ProcessHandle.current().pid();

        Effects(DataSource dataSource, ChaosBoard board, String table) {
            this.dataSource = dataSource;
            this.board = board;
            this.insert = "INSERT INTO " + table + " (broker, id, process) VALUES (?, ?, ?)";
        }

        void apply(String broker, String id, int runs) {
            board.add(HANDLING, 1);
            boolean handling = true;
            try (Connection db = dataSource.getConnection()) {
                db.setAutoCommit(false);
                try (PreparedStatement row = db.prepareStatement(insert)) {
                    row.setString(1, broker);
                    row.setString(2, id);
                    row.setString(3, process);
                    row.executeUpdate();
                }
                // From the commit on, the effect may have happened: the window opens before it is sent.
                board.add(WINDOW, 1);
                board.add(HANDLING, -1);
                handling = false;
                IN_WINDOW.set(Boolean.TRUE);
                db.commit();
                board.add(runs, 1);
            } catch (SQLException e) {
                throw new IllegalStateException("the effect of " + broker + " " + id + " failed", e);
            } finally {
                if (handling) {
                    board.add(HANDLING, -1);
                }
            }
        }

        /** After the store answered the call's completion, release or failure: the window closes. */
        static void settled(ChaosBoard board) {
            if (IN_WINDOW.get() != null) {
                IN_WINDOW.remove();
                board.add(WINDOW, -1);
            }
        }
    }

    /** The starter's store, unchanged, seen from outside: when each call's completion is answered, and how. */
    static final class WatchedStore implements DedupStore {
        private final DedupStore store;
        private final ChaosBoard board;

        WatchedStore(DedupStore store, ChaosBoard board) {
            this.store = store;
            this.board = board;
        }

        @Override
        public boolean complete(Claim claim, Duration retention, byte[] result) {
            boolean completed = false;
            try {
                completed = store.complete(claim, retention, result);
                return completed;
            } finally {
                if (!completed) {
                    board.add(LEASE_LOST, 1);
                }
                Effects.settled(board);
            }
        }

        @Override
        public boolean fail(Claim claim, Duration retention, byte[] error) {
            try {
                return store.fail(claim, retention, error);
            } finally {
                Effects.settled(board);
            }
        }

        @Override
        public boolean release(Claim claim) {
            try {
                return store.release(claim);
            } finally {
                Effects.settled(board);
            }
        }

        @Override
        public String namespace() {
            return store.namespace();
        }

        @Override
        public ClaimResult claim(String key, Duration lease, byte[] fingerprint) {
            return store.claim(key, lease, fingerprint);
        }

        @Override
        public ClaimResult claim(String key, Duration lease) {
            return store.claim(key, lease);
        }

        @Override
        public List<ClaimResult> claimAll(List<String> keys, Duration lease) {
            return store.claimAll(keys, lease);
        }

        @Override
        public boolean extend(Claim claim, Duration lease) {
            return store.extend(claim, lease);
        }

        @Override
        public Optional<KeyRecord> inspect(String key) {
            return store.inspect(key);
        }

        @Override
        public boolean forget(String key) {
            return store.forget(key);
        }

        @Override
        public AsyncDedupStore async() {
            return store.async();
        }

        @Override
        public void close() {
            store.close();
        }
    }
}
