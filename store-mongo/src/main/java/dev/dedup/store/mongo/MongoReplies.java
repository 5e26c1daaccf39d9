package dev.dedup.store.mongo;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The reactive driver's publishers as futures: subscribes, asks for every item at once (a reply is one document,
 * or one batch of at most a claimAll's keys) and completes when the publisher does, on the driver's thread. A
 * small subscriber of our own, so the store needs no Reactor.
 */
final class MongoReplies<T> implements Subscriber<T> {
    private final CompletableFuture<List<T>> done = new CompletableFuture<>();
    private final List<T> items = new ArrayList<>();
    private boolean subscribed;

    private MongoReplies() {}

    /** Every item {@code publisher} emits. */
    static <T> CompletableFuture<List<T>> all(Publisher<T> publisher) {
        MongoReplies<T> replies = new MongoReplies<>();
        publisher.subscribe(replies);
        return replies.done;
    }

    /** The one item of a single-reply publisher ({@code insertOne}, {@code find(...).first()}), or null for none. */
    static <T> CompletableFuture<T> first(Publisher<T> publisher) {
        return all(publisher).thenApply(items -> items.isEmpty() ? null : items.get(0));
    }

    @Override
    public void onSubscribe(Subscription subscription) {
        // Signals arrive one at a time (Reactive Streams rule 1.3), so plain fields are enough.
        if (subscribed) {
            subscription.cancel(); // rule 2.5: a second subscription is refused
            return;
        }
        subscribed = true;
        subscription.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(T item) {
        items.add(item);
    }

    @Override
    public void onError(Throwable failure) {
        done.completeExceptionally(failure);
    }

    @Override
    public void onComplete() {
        done.complete(items);
    }
}
