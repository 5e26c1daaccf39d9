package dev.dedup.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.spi.StoreUri;
import dev.dedup.tck.NoSecrets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** How a URI becomes the driver's connection string and settings; the failures of opening. No server needed. */
class MongoDedupStoreProviderTest {

    private static ConnectionString driverString(String uri) {
        return MongoDedupStoreProvider.connectionString(
                StoreUri.parse(uri, Map.of()).check(new MongoDedupStoreProvider().parameters()));
    }

    @Test
    @DisplayName("the provider is found for mongodb and mongodb+srv")
    void isDiscovered() {
        assertThat(DedupStores.providers())
                .containsEntry("mongodb", List.of(MongoDedupStoreProvider.class.getName()))
                .containsEntry("mongodb+srv", List.of(MongoDedupStoreProvider.class.getName()));
        assertThat(new MongoDedupStoreProvider().artifact()).isEqualTo("dev.dedup:dedup-store-mongo");
    }

    @Test
    @DisplayName("dedup's parameters are stripped; the driver's pass through, user info and path included")
    void driverParametersPassThrough() {
        ConnectionString driver = driverString("mongodb://app:p%40ss@h1:27017,h2:27018/appdb?replicaSet=rs0"
                + "&database=dedup&collection=claims&namespace=orders&timeout=2s&createIndexes=true&appName=my%20app");

        assertThat(driver.getConnectionString()).isEqualTo("mongodb://app:p%40ss@h1:27017,h2:27018/appdb"
                + "?replicaSet=rs0&appName=my%20app");
        assertThat(driver.getHosts()).containsExactly("h1:27017", "h2:27018");
        assertThat(driver.getPassword()).containsExactly("p@ss".toCharArray());
        assertThat(driver.getApplicationName()).isEqualTo("my app");
        assertThat(driverString("mongodb://h:1?tls=false&namespace=x").getConnectionString())
                .isEqualTo("mongodb://h:1/?tls=false");
        assertThat(driverString("mongodb+srv://cluster0.example.net/?database=app&retryWrites=true").isSrvProtocol())
                .isTrue();
    }

    @Test
    @DisplayName("timeout becomes the client's server-selection, connect, read and pool-wait timeouts, unless the URI sets them")
    void timeoutBoundsTheClient() {
        MongoClientSettings settings = MongoDedupStoreProvider.settings(
                new ConnectionString("mongodb://h:27017/"), Duration.ofMillis(1500));
        assertThat(settings.getClusterSettings().getServerSelectionTimeout(TimeUnit.MILLISECONDS)).isEqualTo(1500);
        assertThat(settings.getSocketSettings().getConnectTimeout(TimeUnit.MILLISECONDS)).isEqualTo(1500);
        assertThat(settings.getSocketSettings().getReadTimeout(TimeUnit.MILLISECONDS)).isEqualTo(1500);
        assertThat(settings.getConnectionPoolSettings().getMaxWaitTime(TimeUnit.MILLISECONDS)).isEqualTo(1500);
        assertThat(settings.getApplicationName()).isEqualTo("dedup-store-mongo");

        MongoClientSettings explicit = MongoDedupStoreProvider.settings(
                new ConnectionString("mongodb://h:27017/?serverSelectionTimeoutMS=7000&appName=orders"),
                Duration.ofMillis(1500));
        assertThat(explicit.getClusterSettings().getServerSelectionTimeout(TimeUnit.MILLISECONDS)).isEqualTo(7000);
        assertThat(explicit.getSocketSettings().getConnectTimeout(TimeUnit.MILLISECONDS)).isEqualTo(1500);
        assertThat(explicit.getApplicationName()).isEqualTo("orders");
    }

    @Test
    @DisplayName("bad URIs fail with DedupConfigurationException naming the part and what is allowed")
    void badUrisAreConfigurationErrors() {
        assertThatThrownBy(() -> DedupStores.open("mongodb://127.0.0.1:1/?namespace=x"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("names no database");
        assertThatThrownBy(() -> DedupStores.open("mongodb://127.0.0.1:1/?database=d&createIndexes=maybe"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("createIndexes=maybe");
        assertThatThrownBy(() -> DedupStores.open("mongodb://127.0.0.1:1/?database=d&collection=system.users"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("'system.users'");
        assertThatThrownBy(() -> DedupStores.open("mongodb://127.0.0.1:1/?database=d&timeout=soon"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("timeout=soon");
        assertThatThrownBy(() -> DedupStores.open("mongodb://127.0.0.1:1/?database=d&namespace=a:b"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("namespace");
        assertThatThrownBy(() -> DedupStores.open("mongodb://u:s3cret@127.0.0.1:notaport/?database=d"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("mongodb://***@")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> DedupStores.open("mongodb:/nohost"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("must look like");
    }

    @Test
    @DisplayName("a server that cannot be reached fails open within the timeout, retryably, its password redacted")
    void unreachableServerFailsOpenInTime() {
        long started = System.nanoTime();

        assertThatThrownBy(() -> DedupStores.open("mongodb://app:s3cret@127.0.0.1:1/?database=d&timeout=300ms"))
                .isInstanceOf(DedupStoreException.class)
                .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue())
                .hasMessageContaining("open mongodb://***@127.0.0.1:1/")
                .hasMessageNotContaining("s3cret")
                .hasCauseInstanceOf(com.mongodb.MongoTimeoutException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isLessThan(2_300);
    }

    @Test
    @DisplayName("a + in the password stays a plus, and the driver's options pass through in any case")
    void decodesByRfc3986() {
        ConnectionString driver = driverString("mongodb://app:a+b%2Bc%3A@h:1/?replicaset=rs0&ReadPreference=primary");

        assertThat(driver.getPassword()).containsExactly("a+b+c:".toCharArray());
        assertThat(driver.getUsername()).isEqualTo("app");
        assertThat(driver.getRequiredReplicaSetName()).isEqualTo("rs0");
    }

    @Test
    @DisplayName("a misspelt parameter fails naming the nearest one, instead of going to the driver or the default")
    void misspeltParametersAreRefused() {
        assertThatThrownBy(() -> DedupStores.open("mongodb://h:1/?database=d&namepsace=orders"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("Did you mean namespace?");
        assertThatThrownBy(() -> DedupStores.open("mongodb://h:1/?databse=d"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("Did you mean database?");
        assertThatThrownBy(() -> DedupStores.open("mongodb://h:1/?database=d&colection=c"))
                .hasMessageContaining("Did you mean collection?");
        assertThatThrownBy(() -> DedupStores.open("mongodb://h:1/?database=d&replicaSett=rs0"))
                .hasMessageContaining("Did you mean replicaSet?");
        assertThatThrownBy(() -> DedupStores.open("mongodb://h:1/?database=d&createIndexes=yes"))
                .hasMessageContaining("createIndexes=yes").hasMessageContaining("true or false");
    }

    @Test
    @DisplayName("no credential shows when the server cannot be reached or a parameter is refused")
    void secretsStayOutOfFailures() {
        Throwable unreachable = catchThrowable(() -> DedupStores.open(
                "mongodb://app%40corp:pa55-s3cret@127.0.0.1:1/?database=d&timeout=200ms&authSource=admin"));
        assertThat(unreachable).isInstanceOf(DedupStoreException.class)
                .hasMessageContaining("mongodb://***@127.0.0.1:1/");
        NoSecrets.assertNoSecret(unreachable, "s3cret", "app@corp");

        Throwable refused = catchThrowable(() -> DedupStores.open(
                "mongodb://app:pa55-s3cret@127.0.0.1:1/?database=d&proxyPassword=px-s3cret&namepsace=x"));
        assertThat(refused).isInstanceOf(DedupConfigurationException.class).hasMessageContaining("proxyPassword=***");
        NoSecrets.assertNoSecret(refused, "s3cret");

        Throwable malformed = catchThrowable(() -> DedupStores.open(
                "mongodb+srv://app:pa55-s3cret@cluster.example.net:27017/?database=d"));
        assertThat(malformed).isInstanceOf(DedupConfigurationException.class);
        NoSecrets.assertNoSecret(malformed, "s3cret");
    }
}
