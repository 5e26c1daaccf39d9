package dev.dedup.store.redis;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Client resources whose reconnect back-off is capped. Lettuce's default doubles up to 30 s, so after a long outage
 * the client may sleep for many seconds after the server is back; capped at {@link #MAX_DELAY}, a store is serving
 * again within about that long of the server's return, whatever the outage's length.
 */
final class RedisReconnect {
    static final Duration MAX_DELAY = Duration.ofMillis(500);

    private RedisReconnect() {}

    /** New resources for one client; whoever creates the client shuts them down with it. */
    static ClientResources resources() {
        return DefaultClientResources.builder()
                .reconnectDelay(Delay.exponential(Duration.ZERO, MAX_DELAY, 2, TimeUnit.MILLISECONDS))
                .build();
    }
}
