package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.dedup.Claim;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.spi.StoreUri;
import dev.dedup.tck.NoSecrets;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslVerifyMode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** How a URI becomes Lettuce's RedisURIs, which parameters are refused, and that no credential leaks. */
class RedisDedupStoreProviderTest {

    private static List<RedisURI> nodes(String uri) {
        return RedisDedupStoreProvider.redisUris(
                StoreUri.parse(uri, Map.of()).check(new RedisDedupStoreProvider().parameters()), Duration.ofSeconds(1));
    }

    private static RedisCredentials credentials(RedisURI uri) {
        return uri.getCredentialsProvider().resolveCredentials().block();
    }

    @Test
    @DisplayName("redis://password@host is the password alone; user:password is ACL; both decoded by RFC 3986")
    void mapsCredentials() {
        RedisCredentials passwordOnly = credentials(nodes("redis://s3%3Acret+x@h:1").get(0));
        assertThat(passwordOnly.hasUsername()).isFalse();
        assertThat(passwordOnly.getPassword()).containsExactly("s3:cret+x".toCharArray());

        RedisCredentials acl = credentials(nodes("rediss://app:p%40ss+w@h").get(0));
        assertThat(acl.getUsername()).isEqualTo("app");
        assertThat(acl.getPassword()).containsExactly("p@ss+w".toCharArray());

        RedisCredentials emptyUser = credentials(nodes("redis://:pw@h").get(0));
        assertThat(emptyUser.hasUsername()).isFalse();
        assertThat(emptyUser.getPassword()).containsExactly("pw".toCharArray());
    }

    @Test
    @DisplayName("host, port, TLS, database, client name and peer verification come from the checked values")
    void mapsTheClientSettings() {
        RedisURI standalone = nodes("rediss://h:7000/3?clientName=orders&verifyPeer=CA").get(0);
        assertThat(standalone.getHost()).isEqualTo("h");
        assertThat(standalone.getPort()).isEqualTo(7000);
        assertThat(standalone.isSsl()).isTrue();
        assertThat(standalone.getDatabase()).isEqualTo(3);
        assertThat(standalone.getClientName()).isEqualTo("orders");
        assertThat(standalone.getVerifyMode()).isEqualTo(SslVerifyMode.CA);
        assertThat(standalone.getTimeout()).isEqualTo(Duration.ofSeconds(1));
        assertThat(nodes("redis://h?database=5").get(0).getDatabase()).isEqualTo(5);
        assertThat(nodes("redis://h").get(0).getPort()).isEqualTo(6379);

        List<RedisURI> cluster = nodes("redis-cluster://s3cret@a:7001,[::1]:7002");
        assertThat(cluster).extracting(RedisURI::getHost).containsExactly("a", "::1");
        assertThat(cluster).extracting(RedisURI::getPort).containsExactly(7001, 7002);
        assertThat(credentials(cluster.get(1)).getPassword()).containsExactly("s3cret".toCharArray());
    }

    @Test
    @DisplayName("a URI Lettuce would misread or ignore is refused with what is allowed")
    void refusesWhatLettuceWouldIgnore() {
        assertThatThrownBy(() -> nodes("redis://h1:1,h2:2")).isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("redis-cluster://");
        assertThatThrownBy(() -> nodes("redis-cluster://h1:1/2")).hasMessageContaining("only database 0");
        assertThatThrownBy(() -> nodes("redis://h/2?database=3")).hasMessageContaining("database twice");
        assertThatThrownBy(() -> nodes("redis://h/zero")).hasMessageContaining("'/zero'");
        assertThatThrownBy(() -> DedupStores.open("redis://h?database=x"))
                .hasMessageContaining("database=x").hasMessageContaining("a whole number in [0, 2147483647]");
        assertThatThrownBy(() -> DedupStores.open("redis://h?verifyPeer=false"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("one of [NONE, CA, FULL]");
        assertThatThrownBy(() -> DedupStores.open("redis://u:s3cret@h:notaport"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("'notaport'")
                .hasMessageNotContaining("s3cret");
    }

    @Test
    @DisplayName("misspelt parameters fail naming the nearest one, instead of opening namespace default")
    void misspeltParametersAreRefused() {
        assertThatThrownBy(() -> DedupStores.open("redis://h?namepsace=orders"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("unknown parameter 'namepsace'")
                .hasMessageContaining("Did you mean namespace?")
                .hasMessageContaining("(no driver parameters are passed through)");
        assertThatThrownBy(() -> DedupStores.open("redis://h?hashtag=true")).hasMessageContaining("Did you mean hashTag?");
        assertThatThrownBy(() -> DedupStores.open("redis://h?timeuot=1s")).hasMessageContaining("Did you mean timeout?");
        assertThatThrownBy(() -> DedupStores.open("redis://h?db=1")).hasMessageContaining("unknown parameter 'db'");
        assertThatThrownBy(() -> DedupStores.open("redis://h?hashTag=yes"))
                .hasMessageContaining("hashTag=yes").hasMessageContaining("true or false");
        assertThatThrownBy(() -> DedupStores.open("redis://h?timeout=99999999999999999d"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("[10ms, 5m]");
        assertThatThrownBy(() -> DedupStores.open("redis://h?replicas=17")).hasMessageContaining("[0, 16]");
        assertThatThrownBy(() -> DedupStores.open("redis-cluster://h?replicaTimeout=0ms"))
                .hasMessageContaining("replicaTimeout=0ms");
    }

    @Test
    @DisplayName("no credential shows when the server cannot be reached or a parameter is refused")
    void secretsStayOutOfFailures() {
        for (String scheme : List.of("redis", "redis-cluster")) {
            Throwable unreachable = catchThrowable(() -> DedupStores.open(scheme
                    + "://pa55-s3cret@127.0.0.1:1?timeout=500ms&clientName=c"));
            assertThat(unreachable).as(scheme).isInstanceOf(DedupStoreException.class)
                    .hasMessageContaining(scheme + "://***@127.0.0.1:1");
            NoSecrets.assertNoSecret(unreachable, "s3cret");

            Throwable userAndPassword = catchThrowable(() -> DedupStores.open(scheme
                    + "://app:pa55-s3cret@127.0.0.1:1?timeout=500ms"));
            assertThat(userAndPassword).as(scheme).isInstanceOf(DedupStoreException.class);
            NoSecrets.assertNoSecret(userAndPassword, "s3cret", "app:");

            Throwable refused = catchThrowable(() -> DedupStores.open(scheme
                    + "://pa55-s3cret@127.0.0.1:1?password=pw-s3cret&namespace=n"));
            assertThat(refused).as(scheme).isInstanceOf(DedupConfigurationException.class)
                    .hasMessageContaining(scheme + "://***@127.0.0.1:1?password=***&namespace=n");
            NoSecrets.assertNoSecret(refused, "s3cret");
        }
    }

    @Test
    @DisplayName("a URI with an unknown ACL user fails open on the real server, user-info masked")
    void wrongPasswordOnTheRealServer() {
        String hostAndPort = RedisTestSupport.standaloneUrl().substring("redis://".length());
        Throwable failure = catchThrowable(() -> DedupStores.open("redis://no-such-user:pa55-s3cret@" + hostAndPort
                + "?namespace=uri-auth&timeout=1s"));

        assertThat(failure).isInstanceOf(DedupStoreException.class).hasMessageContaining("redis://***@");
        NoSecrets.assertNoSecret(failure, "s3cret", "no-such-user:");
    }

    @Test
    @DisplayName("a store opened with client settings works on the real server")
    void clientSettingsReachTheServer() {
        try (DedupStore store = DedupStores.open(RedisTestSupport.standaloneUrl()
                + "/0?namespace=uri-client&clientName=dedup-provider-test&hashTag=true&timeout=1s")) {
            assertThat(store.claim("k-" + System.nanoTime(), Duration.ofSeconds(5))).isInstanceOf(Claim.class);
        }
    }
}
