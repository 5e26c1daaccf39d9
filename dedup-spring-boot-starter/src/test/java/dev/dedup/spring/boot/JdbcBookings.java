package dev.dedup.spring.boot;

import java.util.concurrent.CompletableFuture;
import org.springframework.jdbc.core.JdbcTemplate;

/** {@link Bookings} written with {@code JdbcTemplate}, on PostgreSQL or MariaDB. */
public class JdbcBookings extends Bookings {
    private final JdbcTemplate jdbc;

    JdbcBookings(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
        jdbc.execute("CREATE TABLE IF NOT EXISTS inbox_bookings (id varchar(200) NOT NULL, run int NOT NULL)");
    }

    @Override
    void write(String id, int run) {
        jdbc.update("INSERT INTO inbox_bookings (id, run) VALUES (?, ?)", id, run);
    }

    @Override
    int rows(String id) {
        // On a thread of its own: a connection of its own, which sees only what was committed.
        return CompletableFuture.supplyAsync(() -> jdbc.queryForObject(
                "SELECT count(*) FROM inbox_bookings WHERE id = ?", Integer.class, id)).join();
    }
}
