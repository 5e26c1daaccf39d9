package dev.dedup.spring.boot;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.filter.OncePerRequestFilter;

/** A small application: endpoints that count their runs per request body, and a stand-in for authentication. */
@SpringBootConfiguration
@EnableAutoConfiguration
class TestApplication {
    /** Runs of the handlers, by request body: each test sends bodies of its own. */
    static final Map<String, AtomicInteger> RUNS = new ConcurrentHashMap<>();

    /** Releases the last line of a {@code /large} response, by request body. */
    static final Map<String, java.util.concurrent.CountDownLatch> LARGE_RESPONSE_GO = new ConcurrentHashMap<>();
    /** The bodies of the {@code /large} requests whose handler has finished waiting. */
    static final java.util.Set<String> LARGE_RESPONSES_FINISHED = ConcurrentHashMap.newKeySet();

    static int runs(String body) {
        AtomicInteger runs = RUNS.get(body);
        return runs == null ? 0 : runs.get();
    }

    @Bean
    Billing billing() {
        return new Billing();
    }

    @Bean
    FilterRegistrationBean<OncePerRequestFilter> testPrincipal() {
        // Stands in for Spring Security: the X-Test-User header becomes the authenticated principal.
        OncePerRequestFilter filter = new OncePerRequestFilter() {
            @Override
            protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
                    FilterChain chain) throws ServletException, IOException {
                String user = request.getHeader("X-Test-User");
                if (user == null) {
                    chain.doFilter(request, response);
                    return;
                }
                Principal principal = () -> user;
                chain.doFilter(new HttpServletRequestWrapper(request) {
                    @Override
                    public Principal getUserPrincipal() {
                        return principal;
                    }
                }, response);
            }
        };
        FilterRegistrationBean<OncePerRequestFilter> registration = new FilterRegistrationBean<>(filter);
        registration.setOrder(-100);
        return registration;
    }

    /** A broken version of the Idempotency-Key filter's inputs, when {@code test.mutant} names one. */
    @Bean
    FilterRegistrationBean<OncePerRequestFilter> mutant(
            @org.springframework.beans.factory.annotation.Value("${test.mutant:NONE}") FilterMutant mutant) {
        OncePerRequestFilter wrapper = mutant.wrapper();
        FilterRegistrationBean<OncePerRequestFilter> registration = new FilterRegistrationBean<>(
                wrapper != null ? wrapper : new OncePerRequestFilter() {
                    @Override
                    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
                            FilterChain chain) throws ServletException, IOException {
                        chain.doFilter(request, response);
                    }
                });
        registration.setOrder(-1);   // just before the Idempotency-Key filter (0), after the principal (-100)
        registration.setEnabled(wrapper != null);
        return registration;
    }

    @RestController
    static class Payments {
        @PostMapping("/payments")
        ResponseEntity<String> pay(@RequestBody String body,
                @RequestHeader(name = "X-Sleep-Millis", defaultValue = "0") long sleep) throws InterruptedException {
            int run = RUNS.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
            Thread.sleep(sleep);
            return ResponseEntity.status(201)
                    .header("Location", "/payments/" + body)
                    .header("X-Not-Replayed", "run " + run)
                    .header("Content-Type", "application/json")
                    .body("{\"payment\":\"" + body + "\",\"run\":" + run + "}");
        }

        /** Fails with a 500 on its first run for a body, then succeeds. */
        @PostMapping("/flaky")
        ResponseEntity<String> flaky(@RequestBody String body) {
            int run = RUNS.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
            return run == 1 ? ResponseEntity.status(503).body("down") : ResponseEntity.status(201).body("ok " + run);
        }

        /** Throws on its first run for a body, then succeeds. */
        @PostMapping("/throws")
        ResponseEntity<String> throwing(@RequestBody String body) {
            int run = RUNS.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
            if (run == 1) {
                throw new IllegalStateException("first run fails");
            }
            return ResponseEntity.status(201).body("ok " + run);
        }

        /** Not protected: runs without a key. */
        @PostMapping("/open")
        ResponseEntity<String> open(@RequestBody String body) {
            int run = RUNS.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
            return ResponseEntity.ok("open " + run);
        }

        /** Answers 429 on its first run for a body, then 201: a "try later" that must not be stored. */
        @PostMapping("/throttled")
        ResponseEntity<String> throttled(@RequestBody String body) {
            int run = RUNS.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
            return run == 1 ? ResponseEntity.status(429).body("slow down")
                    : ResponseEntity.status(201).body("ok " + run);
        }

        /** Throws a ResponseStatusException: MVC answers with sendError, and the container renders the error page. */
        @PostMapping("/missing")
        ResponseEntity<String> missing(@RequestBody String body) {
            RUNS.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
            throw new ResponseStatusException(HttpStatus.NOT_FOUND, "no account for " + body);
        }

        /** Answers from another thread through a Callable. */
        @PostMapping("/async/callable")
        Callable<ResponseEntity<String>> callable(@RequestBody String body,
                @RequestHeader(name = "X-Sleep-Millis", defaultValue = "0") long sleep) {
            return () -> {
                int run = RUNS.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
                Thread.sleep(sleep);
                return ResponseEntity.status(201).header("Content-Type", "application/json")
                        .body("{\"callable\":\"" + body + "\",\"run\":" + run + "}");
            };
        }

        /** Answers from another thread through a DeferredResult, or never (X-Never): it then times out. */
        @PostMapping("/async/deferred")
        DeferredResult<ResponseEntity<String>> deferred(@RequestBody String body,
                @RequestHeader(name = "X-Sleep-Millis", defaultValue = "0") long sleep,
                @RequestHeader(name = "X-Never", defaultValue = "false") boolean never) {
            DeferredResult<ResponseEntity<String>> result = new DeferredResult<>(never ? 300L : 10_000L);
            int run = RUNS.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
            if (!never) {
                CompletableFuture.runAsync(() -> result.setResult(ResponseEntity.status(201).body("deferred " + run)),
                        CompletableFuture.delayedExecutor(sleep, TimeUnit.MILLISECONDS));
            }
            return result;
        }

        /** Streams its body from another thread. */
        @PostMapping("/async/stream")
        ResponseEntity<StreamingResponseBody> stream(@RequestBody String body) {
            int run = RUNS.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
            StreamingResponseBody chunks = out -> {
                for (int i = 0; i < 3; i++) {
                    out.write(("chunk " + i + " of run " + run + ";").getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
            };
            return ResponseEntity.status(201).contentType(MediaType.TEXT_PLAIN).body(chunks);
        }

        /**
         * Writes 300 KiB, more than a record holds, then waits for {@link #LARGE_RESPONSE_GO} (at most 5 s) before its
         * last line: a client that reads the 300 KiB before releasing it proves the response streamed.
         */
        @PostMapping("/large")
        void large(@RequestBody String body, HttpServletResponse response) throws Exception {
            RUNS.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
            response.setStatus(201);
            response.setContentType("text/plain");
            var out = response.getOutputStream();
            out.write(new byte[300 * 1024]);
            out.flush();
            LARGE_RESPONSE_GO.computeIfAbsent(body, b -> new java.util.concurrent.CountDownLatch(1))
                    .await(5, TimeUnit.SECONDS);
            LARGE_RESPONSES_FINISHED.add(body);
            out.write("end".getBytes(StandardCharsets.UTF_8));
        }

        /** Answers a client error, which is stored like a success. */
        @PostMapping("/rejects")
        ResponseEntity<String> rejects(@RequestBody String body) {
            int run = RUNS.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
            return ResponseEntity.status(400).body("bad " + run);
        }
    }
}
