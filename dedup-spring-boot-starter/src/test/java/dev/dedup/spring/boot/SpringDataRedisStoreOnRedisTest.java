package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import dev.dedup.store.redis.RedisDedupStore;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The store built on Spring Data Redis's Lettuce connection factory (from spring.data.redis.url), on real Redis. */
class SpringDataRedisStoreOnRedisTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                    DedupStoreAutoConfiguration.class));

    @Test
    void springDataRedisGivesARedisStoreOnItsOwnClient() {
        runner.withPropertyValues("spring.data.redis.url=" + Servers.redisUrl(),
                "dedup.namespace=" + Servers.unique("boot-data-redis")).run(context -> {
                    DedupStore store = context.getBean(DedupStore.class);
                    assertThat(store).isInstanceOf(RedisDedupStore.class);
                    StoreClaims.claimsOnce(store);
                });
    }
}
