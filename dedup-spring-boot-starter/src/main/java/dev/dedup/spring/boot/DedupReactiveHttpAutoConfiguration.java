package dev.dedup.spring.boot;

import dev.dedup.AsyncDedupStore;
import dev.dedup.DedupStore;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.server.WebFilter;

/**
 * The {@link ReactiveIdempotencyKeyFilter} on the paths of {@code dedup.http.paths}, in a WebFlux application that
 * has a {@link DedupStore}; {@code dedup.http.enabled=false} turns it off.
 */
@AutoConfiguration(after = DedupStoreAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(WebFilter.class)
@ConditionalOnBean(DedupStore.class)
@ConditionalOnProperty(prefix = "dedup.http", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(DedupProperties.class)
@Import(DedupHttpAutoConfiguration.Metrics.class)
public class DedupReactiveHttpAutoConfiguration {
    /** At most this many blocking store calls of the JDBC stores run at once for the filter. */
    static final int BLOCKING_STORE_THREADS = 16;

    /** Creates the auto-configuration; Spring calls it. */
    public DedupReactiveHttpAutoConfiguration() {}

    /**
     * The filter: on the store's own non-blocking client, or, for a store whose client blocks (PostgreSQL,
     * MySQL/MariaDB), on threads of the filter's own, never on the event loop.
     *
     * @param store the application's store
     * @param properties the settings
     * @param outages the application's outage listener, if any
     * @param blockingStoreExecutor the threads for a store whose client blocks; idle (no thread) otherwise
     * @return the filter, at {@code dedup.http.filter-order}
     */
    @Bean
    @ConditionalOnMissingBean(ReactiveIdempotencyKeyFilter.class)
    public ReactiveIdempotencyKeyFilter reactiveIdempotencyKeyFilter(DedupStore store, DedupProperties properties,
            ObjectProvider<StoreOutageListener> outages,
            @Qualifier("dedupBlockingStoreExecutor") ExecutorService blockingStoreExecutor) {
        return new ReactiveIdempotencyKeyFilter(nonBlocking(store, blockingStoreExecutor), properties,
                outages.getIfAvailable(() -> (passedThrough, failure) -> {}));
    }

    /**
     * The threads that run a blocking store's calls for the filter; shut down with the context.
     *
     * @return an executor of daemon threads, {@value #BLOCKING_STORE_THREADS} at most
     */
    @Bean(destroyMethod = "shutdown")
    @ConditionalOnMissingBean(name = "dedupBlockingStoreExecutor")
    public ExecutorService dedupBlockingStoreExecutor() {
        AtomicInteger threads = new AtomicInteger();
        ThreadPoolExecutor executor = new ThreadPoolExecutor(BLOCKING_STORE_THREADS, BLOCKING_STORE_THREADS,
                30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), work -> {
                    Thread thread = new Thread(work, "dedup-store-" + threads.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }

    private static AsyncDedupStore nonBlocking(DedupStore store, ExecutorService blockingStoreExecutor) {
        try {
            return store.async();
        } catch (UnsupportedOperationException blockingClient) {
            return AsyncDedupStore.onExecutor(store, blockingStoreExecutor);
        }
    }
}
