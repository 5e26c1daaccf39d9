package dev.dedup.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.tck.NoSecrets;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Which URIs the DynamoDB provider refuses before building a client, and that no credential leaks. No server. */
class DynamoDbDedupStoreProviderTest {
    private static final String CREDENTIALS = "&accessKeyId=AKID-s3cret&secretAccessKey=sak-s3cret";

    @Test
    @DisplayName("misspelt parameters fail naming the nearest one, instead of opening namespace default")
    void misspeltParametersAreRefused() {
        assertThatThrownBy(() -> DedupStores.open("dynamodb://t?region=eu-west-1&namepsace=orders"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("unknown parameter 'namepsace'")
                .hasMessageContaining("Did you mean namespace?");
        assertThatThrownBy(() -> DedupStores.open("dynamodb://t?regoin=eu-west-1"))
                .hasMessageContaining("Did you mean region?");
        assertThatThrownBy(() -> DedupStores.open("dynamodb://t?region=eu-west-1&createTabel=true"))
                .hasMessageContaining("Did you mean createTable?");
        assertThatThrownBy(() -> DedupStores.open("dynamodb://t?region=eu-west-1&secretKey=x"))
                .hasMessageContaining("secretKey=***");
    }

    @Test
    @DisplayName("values are strict and bounded; a bad region or endpoint is a configuration error, not an SDK one")
    void valuesAreChecked() {
        assertThatThrownBy(() -> DedupStores.open("dynamodb://t?region=eu-west-1&createTable=yes"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("createTable=yes").hasMessageContaining("true or false");
        assertThatThrownBy(() -> DedupStores.open("dynamodb://t?region=eu-west-1&batchConcurrency=0"))
                .hasMessageContaining("batchConcurrency=0").hasMessageContaining("[1, 256]");
        assertThatThrownBy(() -> DedupStores.open("dynamodb://t?region=eu-west-1&timeout=99999999999999999d"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("[1ms, 10m]");
        assertThatThrownBy(() -> DedupStores.open("dynamodb://t?region=EU%20West%201"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("region=EU West 1").hasMessageContaining("for example eu-west-1");
        assertThatThrownBy(() -> DedupStores.open("dynamodb://t?endpoint=localhost:8000"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("endpoint=localhost:8000").hasMessageContaining("http://");
        assertThatThrownBy(() -> DedupStores.open("dynamodb://t/x?region=eu-west-1"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("one table");
        assertThatThrownBy(() -> DedupStores.open("dynamodb://?region=eu-west-1"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("one table");
    }

    @Test
    @DisplayName("no credential shows when the endpoint cannot be reached, the URI has user-info or a parameter is refused")
    void secretsStayOutOfFailures() {
        Throwable unreachable = catchThrowable(() -> DedupStores.open(
                "dynamodb://dedup_claims?endpoint=http://127.0.0.1:1&timeout=500ms" + CREDENTIALS));
        assertThat(unreachable).isInstanceOf(DedupStoreException.class);
        NoSecrets.assertNoSecret(unreachable, "s3cret");

        Throwable userInfo = catchThrowable(() -> DedupStores.open(
                "dynamodb://AKID-s3cret:sak-s3cret@dedup_claims?region=eu-west-1"));
        assertThat(userInfo).isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("dynamodb://***@dedup_claims").hasMessageContaining("accessKeyId");
        NoSecrets.assertNoSecret(userInfo, "s3cret");

        Throwable refused = catchThrowable(() -> DedupStores.open(
                "dynamodb://dedup_claims?region=eu-west-1&namepsace=x" + CREDENTIALS));
        assertThat(refused).isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("accessKeyId=***&secretAccessKey=***");
        NoSecrets.assertNoSecret(refused, "s3cret");
    }
}
