package dev.dedup.rabbitmq;

import com.rabbitmq.client.Channel;
import dev.dedup.rabbitmq.spring.IdempotentMessageListener;
import dev.dedup.tck.MutantRun;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;

/**
 * Proves the RabbitMQ entry points' tests can fail: runs each control's catching test on a mutant of
 * {@link IdempotentDeliverCallback} or {@link IdempotentMessageListener} and fails unless that test fails on it, by
 * the assertion named here. The controls, the same tests on the real entry points, are
 * {@link CrashMidHandlerOnRabbitMqTest} and {@link IdempotentMessageListenerOnRabbitMqTest}. The nested mutants run
 * only from here (Surefire leaves nested classes alone).
 */
class EntryPointMutantsTest {
    @Test
    @DisplayName("acks before completing: CrashMidHandlerOnRabbitMqTest"
            + ".aCrashBeforeTheEffectTakesEffectOnceOnTheRedelivery fails on a callback whose deliveries are acked as"
            + " they arrive")
    void acksBeforeCompleting() {
        MutantRun.of(AcksBeforeCompleting.class, "aCrashBeforeTheEffectTakesEffectOnceOnTheRedelivery")
                .assertCaughtBy("aCrashBeforeTheEffectTakesEffectOnceOnTheRedelivery",
                        "the delivery the crashed consumer had not acked is back in the work queue");
    }

    @Test
    @DisplayName("parks a transient copy: IdempotentMessageListenerOnRabbitMqTest"
            + ".aParkedCopyKeepsTheOriginalsDeliveryModeAndUserId fails on a listener that parks what Spring's"
            + " converter gives back")
    void parksATransientCopy() {
        MutantRun.of(ParksATransientCopy.class, "aParkedCopyKeepsTheOriginalsDeliveryModeAndUserId")
                .assertCaughtBy("aParkedCopyKeepsTheOriginalsDeliveryModeAndUserId",
                        "the parked copy of a persistent message: its delivery mode");
    }

    /**
     * The callback on a channel that consumes with automatic acks: the broker counts each delivery acked when it
     * sends it, before the handler ran and the key was completed, so a consumer that dies mid-handler loses it. The
     * callback's own settlements are dropped (the broker no longer knows the delivery tags, and would close the
     * channel over them).
     */
    static class AcksBeforeCompleting extends CrashMidHandlerOnRabbitMqTest {
        @Override
        Channel entryChannel(Channel channel) {
            InvocationHandler handler = (proxy, method, args) -> {
                switch (method.getName()) {
                    case "basicAck", "basicNack", "basicReject" -> {
                        return null;
                    }
                    case "basicConsume" -> {
                        if (args.length > 1 && args[1] instanceof Boolean) {
                            args[1] = true;     // autoAck
                        }
                    }
                    default -> { }
                }
                try {
                    return method.invoke(channel, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            };
            return (Channel) Proxy.newProxyInstance(Channel.class.getClassLoader(), new Class<?>[] {Channel.class},
                    handler);
        }
    }

    /**
     * The listener as it was before it kept the received delivery mode: Spring AMQP's converter moves
     * {@code delivery-mode} into {@code receivedDeliveryMode}, which this hides from the listener, so the properties
     * it rebuilds have none and the parked copy of a persistent message is transient.
     */
    static class ParksATransientCopy extends IdempotentMessageListenerOnRabbitMqTest {
        @Override
        ChannelAwareMessageListener entryPoint(IdempotentMessageListener listener) {
            return (message, channel) -> {
                message.getMessageProperties().setReceivedDeliveryMode(null);
                listener.onMessage(message, channel);
            };
        }
    }
}
