package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.store.redis.RedisDedupStore;
import io.lettuce.core.RedisClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The store built on the application's Lettuce {@code RedisClient} bean, claiming on the real server. */
class RedisClientStoreOnRedisTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DedupStoreAutoConfiguration.class))
            .withBean(RedisClient.class, () -> RedisClient.create(Servers.redisUrl()), bean ->
                    bean.setDestroyMethodName("shutdown"));

    @Test
    void aRedisClientBeanGivesARedisStoreThatClaims() {
        runner.withPropertyValues("dedup.namespace=" + Servers.unique("boot-client")).run(context -> {
            DedupStore store = context.getBean(DedupStore.class);
            assertThat(store).isInstanceOf(RedisDedupStore.class);
            ClaimResult first = store.claim("k", Duration.ofSeconds(5));
            assertThat(first).isInstanceOf(Claim.class);
            assertThat(store.claim("k", Duration.ofSeconds(5)).isClaimed()).isFalse();
            assertThat(store.release((Claim) first)).isTrue();
        });
    }

    @Test
    void withMetricsTheStoresAsyncStillWorksAndIsTimed() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        runner.withConfiguration(AutoConfigurations.of(DedupMetricsAutoConfiguration.class))
                .withBean(MeterRegistry.class, () -> meters)
                .withPropertyValues("dedup.namespace=" + Servers.unique("boot-metered")).run(context -> {
                    ClaimResult claimed = context.getBean(DedupStore.class).async().claim("k", Duration.ofSeconds(5))
                            .toCompletableFuture().get(5, TimeUnit.SECONDS);

                    assertThat(claimed).isInstanceOf(Claim.class);
                    assertThat(meters.get("dedup.store.calls").tag("operation", "claim").timer().count())
                            .isEqualTo(1);
                });
    }

    @Test
    void anApplicationStoreBeanWins() {
        runner.withBean("myStore", DedupStore.class, () -> dev.dedup.DedupStores.open("memory:?namespace=mine"))
                .run(context -> assertThat(context.getBean(DedupStore.class).namespace()).isEqualTo("mine"));
    }
}
