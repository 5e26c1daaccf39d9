package dev.dedup.spring.boot;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Broken versions of the {@code Idempotency-Key} filter, for {@link IdempotencyKeyMutantsTest}: each hides from the
 * filter what it needs, or sets it up wrongly, so the filter makes one of the mistakes the contract must catch.
 * Selected by the {@code test.mutant} property; the test application puts the wrapping filter just before the
 * real one.
 */
enum FilterMutant {
    /** The real filter, unbroken: the control. */
    NONE("the real filter"),
    /** The filter never sees the query string, so it fingerprints method, path and body only. */
    FINGERPRINT_WITHOUT_QUERY("fingerprints without the query string"),
    /** A 429 (and every other 4xx) is stored and replayed for the whole retention. */
    STORES_TRANSIENT_4XX("stores a 429"),
    /** The filter believes an asynchronous handler finished when it returned, and settles the key then. */
    SETTLES_ON_ASYNC_START("settles the key when async processing starts"),
    /** An error page is stored as the status alone, and replayed empty. */
    STORES_ERROR_PAGES("stores an error page it cannot replay"),
    /** Every anonymous caller shares one key scope. */
    SHARES_ANONYMOUS_SCOPE("lets anonymous callers share one key scope");

    final String description;

    FilterMutant(String description) {
        this.description = description;
    }

    /** {@return the filter that breaks the real one's inputs, placed just before it; null when none is needed} */
    OncePerRequestFilter wrapper() {
        return switch (this) {
            case FINGERPRINT_WITHOUT_QUERY -> wrapping(request -> new HttpServletRequestWrapper(request) {
                @Override
                public String getQueryString() {
                    return null;
                }
            }, response -> response);
            case SETTLES_ON_ASYNC_START -> wrapping(request -> new HttpServletRequestWrapper(request) {
                @Override
                public boolean isAsyncStarted() {
                    return false;
                }
            }, response -> response);
            case STORES_ERROR_PAGES -> wrapping(request -> request, response -> new HttpServletResponseWrapper(response) {
                @Override
                public void sendError(int status) {
                    setStatus(status);
                }

                @Override
                public void sendError(int status, String message) {
                    setStatus(status);
                }
            });
            default -> null;
        };
    }

    private static OncePerRequestFilter wrapping(java.util.function.UnaryOperator<HttpServletRequest> requests,
            java.util.function.UnaryOperator<HttpServletResponse> responses) {
        return new OncePerRequestFilter() {
            @Override
            protected boolean shouldNotFilterAsyncDispatch() {
                return false;
            }

            @Override
            protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
                    FilterChain chain) throws ServletException, IOException {
                chain.doFilter(requests.apply(request), responses.apply(response));
            }
        };
    }
}
