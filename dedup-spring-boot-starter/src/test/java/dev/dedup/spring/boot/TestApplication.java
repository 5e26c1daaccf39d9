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
import org.springframework.http.ResponseEntity;
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

        /** Answers a client error, which is stored like a success. */
        @PostMapping("/rejects")
        ResponseEntity<String> rejects(@RequestBody String body) {
            int run = RUNS.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
            return ResponseEntity.status(400).body("bad " + run);
        }
    }
}
