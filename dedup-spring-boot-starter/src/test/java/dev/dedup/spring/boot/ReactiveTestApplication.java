package dev.dedup.spring.boot;

import static dev.dedup.spring.boot.TestApplication.RUNS;

import java.security.Principal;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

/**
 * The WebFlux twin of {@link TestApplication}: the same endpoints, written the reactive way (no handler blocks; a
 * slow one waits on a timer), counting their runs per request body in {@link TestApplication#RUNS}. Started with
 * {@code spring.main.web-application-type=reactive}, since the test class path also holds Spring MVC.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class ReactiveTestApplication {

    /** Stands in for Spring Security: the X-Test-User header becomes the exchange's principal. */
    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE)
    WebFilter testPrincipal() {
        return (exchange, chain) -> {
            String user = exchange.getRequest().getHeaders().getFirst("X-Test-User");
            if (user == null) {
                return chain.filter(exchange);
            }
            Principal principal = () -> user;
            return chain.filter(exchange.mutate().principal(Mono.just(principal)).build());
        };
    }

    @Bean
    Wallet wallet() {
        return new Wallet();
    }

    private static int run(String body) {
        return RUNS.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
    }

    /** Calls the reactive {@code @Idempotent} methods from the event loop, as a WebFlux application does. */
    @RestController
    static class Wallets {
        private final Wallet wallet;

        Wallets(Wallet wallet) {
            this.wallet = wallet;
        }

        @PostMapping("/wallet/credit")
        Mono<Wallet.Receipt> credit(@RequestHeader("X-Id") String id,
                @RequestHeader(name = "X-Sleep-Millis", defaultValue = "0") long sleep) {
            return wallet.credit(id, 100, sleep);
        }

        @PostMapping("/wallet/debit")
        Mono<Wallet.Receipt> debit(@RequestHeader("X-Id") String id) {
            return Mono.fromCompletionStage(() -> wallet.debit(id, 100));
        }
    }

    @RestController
    static class Payments {
        @PostMapping("/payments")
        Mono<ResponseEntity<String>> pay(@RequestBody String body,
                @RequestHeader(name = "X-Sleep-Millis", defaultValue = "0") long sleep) {
            int run = run(body);
            return Mono.delay(Duration.ofMillis(sleep)).map(tick -> ResponseEntity.status(201)
                    .header("Location", "/payments/" + body)
                    .header("X-Not-Replayed", "run " + run)
                    .header("Content-Type", "application/json")
                    .body("{\"payment\":\"" + body + "\",\"run\":" + run + "}"));
        }

        /** Answers 503 on its first run for a body, then succeeds. */
        @PostMapping("/flaky")
        Mono<ResponseEntity<String>> flaky(@RequestBody String body) {
            int run = run(body);
            return Mono.just(run == 1 ? ResponseEntity.status(503).body("down")
                    : ResponseEntity.status(201).body("ok " + run));
        }

        /** Fails (an error signal, as reactive handlers do) on its first run for a body, then succeeds. */
        @PostMapping("/throws")
        Mono<ResponseEntity<String>> throwing(@RequestBody String body) {
            int run = run(body);
            return run == 1 ? Mono.error(new IllegalStateException("first run fails"))
                    : Mono.just(ResponseEntity.status(201).body("ok " + run));
        }

        /** Not protected: runs without a key. */
        @PostMapping("/open")
        Mono<String> open(@RequestBody String body) {
            return Mono.just("open " + run(body));
        }

        /** Answers 429 on its first run for a body, then 201: a "try later" that must not be stored. */
        @PostMapping("/throttled")
        Mono<ResponseEntity<String>> throttled(@RequestBody String body) {
            int run = run(body);
            return Mono.just(run == 1 ? ResponseEntity.status(429).body("slow down")
                    : ResponseEntity.status(201).body("ok " + run));
        }

        /** Fails with a ResponseStatusException, which WebFlux's error handler renders after the filter. */
        @PostMapping("/missing")
        Mono<String> missing(@RequestBody String body) {
            run(body);
            return Mono.error(new ResponseStatusException(HttpStatus.NOT_FOUND, "no account for " + body));
        }

        /** Answers a client error, which is stored like a success. */
        @PostMapping("/rejects")
        Mono<ResponseEntity<String>> rejects(@RequestBody String body) {
            return Mono.just(ResponseEntity.status(400).body("bad " + run(body)));
        }
    }
}
