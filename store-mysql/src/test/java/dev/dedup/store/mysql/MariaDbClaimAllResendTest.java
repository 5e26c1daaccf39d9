package dev.dedup.store.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.tck.FaultProxy;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A pool without auto-commit (HikariCP's {@code autoCommit=false}), where a whole claimAll is one transaction of
 * the store's: the reply to its commit is lost, so the store claims the batch again on another connection.
 */
class MariaDbClaimAllResendTest {

    @Test
    @DisplayName("claimAll whose commit reply is lost, on a pool without auto-commit, claims its keys again")
    void claimAllAfterLostCommitReply() {
        AtomicBoolean losesNextCommit = new AtomicBoolean();
        URI server = MariaDbTestSupport.address();
        try (FaultProxy proxy = FaultProxy.start(server.getHost(), server.getPort());
                HikariDataSource pool = poolWithoutAutoCommit(proxy, server);
                DedupStore store = MysqlDedupStore.builder(losingCommitReply(pool, proxy, losesNextCommit))
                        .namespace("claim-all-resend").createSchema(true).build()) {
            List<String> keys = List.of("a-" + UUID.randomUUID(), "b-" + UUID.randomUUID());

            losesNextCommit.set(true);
            List<ClaimResult> claimed = store.claimAll(keys, Duration.ofMinutes(1));

            assertThat(proxy.lostReplies()).isOne();
            assertThat(claimed).allSatisfy(result -> assertThat(result).isInstanceOf(Claim.class));
            for (ClaimResult result : claimed) {
                Claim claim = (Claim) result;
                assertThat(store.inspect(claim.key()).orElseThrow().owner()).as("committed under the claim's owner")
                        .isEqualTo(claim.owner());
            }
        }
    }

    private static HikariDataSource poolWithoutAutoCommit(FaultProxy proxy, URI server) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:mariadb://" + proxy.host() + ":" + proxy.port() + server.getPath() + "?"
                + server.getQuery());
        config.setMaximumPoolSize(2);
        config.setAutoCommit(false);
        return new HikariDataSource(config);
    }

    /** The pool, whose connections have the proxy lose the reply to the next commit while {@code armed} is set. */
    private static DataSource losingCommitReply(HikariDataSource pool, FaultProxy proxy, AtomicBoolean armed) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (ds, method, args) -> {
                    Object result = invoke(method, pool, args);
                    if (!(result instanceof Connection connection)) {
                        return result;
                    }
                    return Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                            (c, call, callArgs) -> {
                                if (call.getName().equals("commit") && armed.getAndSet(false)) {
                                    proxy.loseNextReply();
                                }
                                return invoke(call, connection, callArgs);
                            });
                });
    }

    private static Object invoke(Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
