package dev.dedup.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The chaos proof, sized for a 2-core machine: 2,000 messages with unique ids, 10% published twice, 3 consumers
 * whose connections a driver kills every 0.5 to 1 s and which halt themselves at chosen points. With the
 * PostgreSQL store nothing is lost and nothing is doubled beyond the crashes between effect and completion; the
 * naive consumer, the control, doubles. The figures are printed and written to {@code target/rabbitmq-chaos.txt}.
 */
@Timeout(180)
class ChaosOnRabbitMqTest {
    private static final int MESSAGES = Integer.getInteger("dedup.chaos.messages", 2_000);
    private static final long SEED = Long.getLong("dedup.chaos.seed", System.nanoTime());

    @Test
    void idempotentConsumersLoseNothingAndDoubleOnlyAtTheDocumentedLimitWhileTheNaiveOnesDouble() throws Exception {
        RabbitChaos.Figures idempotent = run(true);
        RabbitChaos.Figures naive = run(false);

        assertThat(idempotent.lost()).as(idempotent.toString()).isZero();
        assertThat(idempotent.deadLettered()).as(idempotent.toString()).isZero();
        assertThat(idempotent.doubled()).as(idempotent.toString())
                .isLessThanOrEqualTo(idempotent.crashes(RabbitChaos.Point.EFFECT_TO_COMPLETION));
        assertThat(idempotent.kills()).as("the driver killed consumers").isPositive();

        assertThat(naive.lost()).as(naive.toString()).isZero();
        // Every second publish is applied again, and so is every effect whose ack a crash lost.
        assertThat(naive.doubled()).as(naive.toString()).isGreaterThanOrEqualTo(naive.publishes() - naive.messages());
    }

    private static RabbitChaos.Figures run(boolean dedup) throws Exception {
        String run = RabbitTestBroker.unique(dedup ? "rabbit_chaos" : "rabbit_naive").replace('-', '_');
        try (RabbitFixture rabbit = new RabbitFixture(Duration.ofMillis(500));
                Reservations reservations = new Reservations(run)) {
            RabbitChaos.Figures figures = new RabbitChaos(dedup, MESSAGES, SEED, rabbit, reservations)
                    .run(Duration.ofSeconds(75));
            assertThat(reservations.totalReserved()).as("the effect is atomic").isEqualTo(reservations.loggedQuantity());
            record(figures);
            return figures;
        }
    }

    private static void record(RabbitChaos.Figures figures) throws IOException {
        String line = "seed=" + SEED + " " + figures;
        System.out.println("[rabbitmq chaos] " + line);
        Files.writeString(Path.of("target", "rabbitmq-chaos.txt"), line + System.lineSeparator(),
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }
}
