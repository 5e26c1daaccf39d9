package dev.dedup.spring.boot;

// readme:inbox-imports
import dev.dedup.spring.boot.Idempotent;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
// end

/**
 * The service docs/spring-boot.md shows for the inbox in the application's transaction, compiled and run by
 * {@link InboxInTransactionOnPostgresTest}: the order's row, its claim and its stored result commit together.
 */
@Service
public class Orders {
    /** An order to place. */
    public record Order(String id, long cents) {}

    /** What placing an order returns, replayed to a duplicate. */
    public record Placed(String orderId, long cents) {}

    private final JdbcTemplate jdbc;

    Orders(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    // readme:inbox-method
    @Transactional
    @Idempotent(key = "#order.id()", inTransaction = true)
    public Placed place(Order order) {
        jdbc.update("INSERT INTO placed_orders (id, cents) VALUES (?, ?)", order.id(), order.cents());
        return new Placed(order.id(), order.cents());   // stored in the transaction that wrote the row
    }
    // end
}
