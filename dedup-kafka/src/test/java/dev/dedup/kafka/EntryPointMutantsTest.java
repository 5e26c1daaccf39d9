package dev.dedup.kafka;

import dev.dedup.tck.MutantRun;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Collection;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Proves the Kafka entry point's tests can fail: runs the control's catching test on a mutant of
 * {@link KafkaRecordProcessor} and fails unless that test fails on it, by the assertion named here. The control, the
 * same test with the real processor, is {@link OffsetsOnKafkaTest}. The nested mutants run only from here (Surefire
 * leaves nested classes alone).
 */
class EntryPointMutantsTest {
    @Test
    @DisplayName("commits past an Error: OffsetsOnKafkaTest.errorFromTheHandlerSeeksBack fails on a processor that"
            + " does not seek back after an Error")
    void commitsPastAnError() {
        MutantRun.of(CommitsPastAnError.class, "errorFromTheHandlerSeeksBack")
                .assertCaughtBy("errorFromTheHandlerSeeksBack", "committed offset, never past a record that never ran");
    }

    /**
     * The processor on a consumer that drops a seek unless a pause of its partition follows: a rewind (seek, then
     * pause) still works, but the seek back after an {@link Error} (no pause) is lost, so the consumer's position
     * stays past the records that never ran, and the next poll's commit passes them.
     */
    static class CommitsPastAnError extends OffsetsOnKafkaTest {
        @Override
        Consumer<String, String> processorConsumer(KafkaConsumer<String, String> consumer) {
            return seekingOnlyBeforePause(consumer);
        }
    }

    @SuppressWarnings("unchecked")
    private static Consumer<String, String> seekingOnlyBeforePause(KafkaConsumer<String, String> consumer) {
        InvocationHandler handler = new InvocationHandler() {
            private Object[] pendingSeek;    // partition and offset of the last seek, held back

            @Override
            public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
                Object[] seek = pendingSeek;
                pendingSeek = null;
                if (method.getName().equals("seek") && args.length == 2 && args[1] instanceof Long) {
                    pendingSeek = args;
                    return null;
                }
                if (seek != null && method.getName().equals("pause")
                        && ((Collection<?>) args[0]).contains((TopicPartition) seek[0])) {
                    consumer.seek((TopicPartition) seek[0], (Long) seek[1]);
                }
                try {
                    return method.invoke(consumer, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            }
        };
        return (Consumer<String, String>) Proxy.newProxyInstance(Consumer.class.getClassLoader(),
                new Class<?>[] {Consumer.class}, handler);
    }
}
