package dev.dedup.store.mongo;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock the test moves by hand, to cross expiries without waiting. */
final class TestClock extends Clock {
    private final AtomicLong millis;

    TestClock(Instant start) {
        this.millis = new AtomicLong(start.toEpochMilli());
    }

    void advance(Duration duration) {
        millis.addAndGet(duration.toMillis());
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("a TestClock is always UTC");
    }
}
