package dev.dedup.spring.boot;

import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.Id;
import jakarta.persistence.PersistenceContext;
import jakarta.persistence.Table;
import java.util.concurrent.CompletableFuture;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * {@link Bookings} written with JPA (Hibernate): the row is an entity, inserted when the commit flushes, after the
 * completion was written on the same connection.
 */
public class JpaBookings extends Bookings {
    /** The booking's row; its id is the booking's, so a second row for one booking fails at the flush. */
    @Entity
    @Table(name = "inbox_booking_rows")
    public static class BookingRow {
        @Id
        private String id;
        private int run;

        protected BookingRow() {}

        BookingRow(String id, int run) {
            this.id = id;
            this.run = run;
        }
    }

    @PersistenceContext
    private EntityManager entities;
    private final JdbcTemplate jdbc;

    JpaBookings(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    void write(String id, int run) {
        entities.persist(new BookingRow(id, run));
    }

    @Override
    int rows(String id) {
        return CompletableFuture.supplyAsync(() -> jdbc.queryForObject(
                "SELECT count(*) FROM inbox_booking_rows WHERE id = ?", Integer.class, id)).join();
    }

    /** Commits a row for {@code id} in a transaction of its own, so that a booking's flush will collide with it. */
    void takeRowOf(String id) {
        jdbc.update("INSERT INTO inbox_booking_rows (id, run) VALUES (?, 0)", id);
    }

    void freeRowOf(String id) {
        jdbc.update("DELETE FROM inbox_booking_rows WHERE id = ?", id);
    }
}
