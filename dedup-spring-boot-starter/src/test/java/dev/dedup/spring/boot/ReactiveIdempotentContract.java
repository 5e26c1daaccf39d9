package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.DedupConfigurationException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * {@link Idempotent} methods that return a {@code Mono} or a {@code CompletionStage}, called from WebFlux handlers on
 * the event loop with BlockHound on (a blocking call there fails the request with a 500), and directly.
 */
abstract class ReactiveIdempotentContract {
    @LocalServerPort
    int port;

    @Autowired
    Wallet wallet;

    Http http;

    @BeforeAll
    static void blockingCheck() {
        BlockingCheck.install();
    }

    @BeforeEach
    void client() {
        http = new Http(port);
    }

    private HttpResponse<String> call(String path, String id, String... headers) {
        String[] all = java.util.Arrays.copyOf(headers, headers.length + 2);
        all[headers.length] = "X-Id";
        all[headers.length + 1] = id;
        return http.postAnonymously(path, null, "", all);
    }

    @Test
    void aMonoMethodRunsOnceAndItsValueIsReplayedFromTheEventLoop() {
        String id = Servers.unique("credit");

        HttpResponse<String> first = call("/wallet/credit", id);
        HttpResponse<String> again = call("/wallet/credit", id);

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).contains("\"run\":1");
        assertThat(again.statusCode()).isEqualTo(200);
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(wallet.runs(id)).isEqualTo(1);
    }

    @Test
    void aCompletionStageMethodRunsOnceAndItsValueIsReplayedFromTheEventLoop() {
        String id = Servers.unique("debit");

        HttpResponse<String> first = call("/wallet/debit", id);
        HttpResponse<String> again = call("/wallet/debit", id);

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).contains("\"cents\":-100", "\"run\":1");
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(wallet.runs(id)).isEqualTo(1);
    }

    @Test
    void anErrorSignalReleasesTheKeySoTheNextSubscriptionRunsAgain() {
        String id = Servers.unique("fail");

        HttpResponse<String> failed = call("/wallet/credit", id);
        HttpResponse<String> retry = call("/wallet/credit", id);

        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(retry.statusCode()).isEqualTo(200);
        assertThat(retry.body()).contains("\"run\":2");
        assertThat(wallet.runs(id)).isEqualTo(2);
    }

    @Test
    void nothingHappensBeforeSubscriptionAndEachSubscriptionIsACall() {
        String id = Servers.unique("lazy");

        var credit = wallet.credit(id, 100, 0);
        assertThat(wallet.runs(id)).isZero();

        assertThat(credit.block(Duration.ofSeconds(10)).run()).isEqualTo(1);
        assertThat(credit.block(Duration.ofSeconds(10)).run()).isEqualTo(1);   // the second is the replay
        assertThat(wallet.runs(id)).isEqualTo(1);
    }

    @Test
    void heartbeatsHoldTheKeyPastItsLeaseWhileTheMonoRuns() throws Exception {
        String id = Servers.unique("slow");
        // The lease is 1 s; the value comes after 2.5 s.
        CompletableFuture<Wallet.Receipt> first = wallet.credit(id, 100, 2500).toFuture();
        Thread.sleep(1800);

        assertThatThrownBy(() -> wallet.credit(id, 100, 0).block(Duration.ofSeconds(10)))
                .isInstanceOf(IdempotentCallInProgressException.class);
        assertThat(first.get().run()).isEqualTo(1);
        assertThat(wallet.credit(id, 100, 0).block(Duration.ofSeconds(10)).run()).isEqualTo(1);
        assertThat(wallet.runs(id)).isEqualTo(1);
    }

    @Test
    void theDocumentedDepositRunsOnce() {
        String id = Servers.unique("deposit");

        Wallet.Receipt first = wallet.deposit(id, 500).block(Duration.ofSeconds(10));
        Wallet.Receipt again = wallet.deposit(id, 500).block(Duration.ofSeconds(10));

        assertThat(again).isEqualTo(first);
        assertThat(wallet.runs(id)).isEqualTo(1);
    }

    @Test
    void withAnInProgressWaitAMonoCallWaitsForTheHolderOnATimerAndReplaysItsValue() throws Exception {
        String id = Servers.unique("waited");
        CompletableFuture<Wallet.Receipt> first = wallet.credit(id, 100, 1000).toFuture();
        Thread.sleep(300);   // its claim is made at once; its value comes after 1 s

        Wallet.Receipt waited = wallet.creditAfterWaiting(id).block(Duration.ofSeconds(10));

        assertThat(waited).isEqualTo(first.get());
        assertThat(wallet.runs(id)).isEqualTo(1);
    }

    @Test
    void anEmptyMonoIsReplayedEmpty() {
        String id = Servers.unique("close");

        assertThat(wallet.close(id).blockOptional(Duration.ofSeconds(10))).isEmpty();
        assertThat(wallet.close(id).blockOptional(Duration.ofSeconds(10))).isEmpty();
        assertThat(wallet.runs(id)).isEqualTo(1);
    }

    @Test
    void aFluxIsRefusedNamingWhatToReturnInstead() {
        assertThatThrownBy(() -> wallet.history("h"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("Wallet.history returns Flux")
                .hasMessageContaining("Mono<List<T>>");
    }
}
