package dev.dedup.spring.boot;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.support.ListenerExecutionFailedException;

/**
 * Settles the messages an {@link Idempotent} {@code @RabbitListener} method did not run for, as advice in a listener
 * container's advice chain. Spring AMQP's containers requeue a failed message by default, and it comes straight back:
 * for these outcomes, a loop as fast as the broker redelivers.
 *
 * <ul>
 *   <li>{@link IdempotentCallFailedException} (a kept failure), {@link IdempotencyKeyReusedException} and
 *       {@link IdempotentResultUnavailableException} are final:
 *       the message is rejected without requeue, so the queue's dead-letter exchange takes it (without one, the
 *       broker drops it).</li>
 *   <li>{@link IdempotentCallInProgressException}: the consumer waits until the running call's lease ends, from
 *       100 ms up to {@code maxWait}, then the message is requeued, even where rejected messages are not requeued by
 *       default: the running call decides it.</li>
 * </ul>
 *
 * <p>Any other failure passes through unchanged, to the container's error handler and requeue setting.
 * {@link DedupRabbitListenerAutoConfiguration} adds this advice to the application's listener container factories.
 */
public final class IdempotentRabbitListenerAdvice implements MethodInterceptor {
    /** Never requeue at once: with the store's clock ahead of ours, a lease that looks over may not be over. */
    private static final Duration MIN_WAIT = Duration.ofMillis(100);

    private final Duration maxWait;

    /**
     * Creates the advice.
     *
     * @param maxWait the longest a consumer waits on a key another call holds before requeueing the message, from
     *     100 ms to 1 minute: the consumer takes no other message meanwhile
     */
    public IdempotentRabbitListenerAdvice(Duration maxWait) {
        Objects.requireNonNull(maxWait, "maxWait");
        if (maxWait.compareTo(MIN_WAIT) < 0 || maxWait.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new IllegalArgumentException("maxWait must be from 100 ms to 1 minute, but was " + maxWait);
        }
        this.maxWait = maxWait;
    }

    /**
     * Invokes the listener and settles its idempotency outcomes as the class describes.
     *
     * @param invocation the container's call of its listener
     * @return what the listener returned
     * @throws Throwable the listener's failure, or one that rejects or requeues the message
     */
    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        try {
            return invocation.proceed();
        } catch (RuntimeException e) {
            IdempotentCallException call = idempotentCause(e);
            if (call instanceof IdempotentCallInProgressException running) {
                waitOut(running.leaseExpiresAt());
                throw failed(e, new ImmediateRequeueAmqpException(call.getMessage() + "; requeued", call));
            }
            if (call != null) {
                throw failed(e, new AmqpRejectAndDontRequeueException(call.getMessage() + "; rejected", call));
            }
            throw e;
        }
    }

    private static IdempotentCallException idempotentCause(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof IdempotentCallException call) {
                return call;
            }
        }
        return null;
    }

    private void waitOut(Instant leaseEnd) {
        Duration untilEnd = Duration.between(Instant.now(), leaseEnd);
        Duration wait = untilEnd.compareTo(MIN_WAIT) < 0 ? MIN_WAIT
                : untilEnd.compareTo(maxWait) > 0 ? maxWait : untilEnd;
        try {
            Thread.sleep(wait.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();     // the container is stopping: requeue now
        }
    }

    /** The container's own shape for a settled failure (as its retry recoverers throw): the message kept with it. */
    private static ListenerExecutionFailedException failed(RuntimeException original, RuntimeException settlement) {
        Message message = original instanceof ListenerExecutionFailedException listener
                ? listener.getFailedMessage() : null;
        return message == null ? new ListenerExecutionFailedException(settlement.getMessage(), settlement)
                : new ListenerExecutionFailedException(settlement.getMessage(), settlement, message);
    }
}
