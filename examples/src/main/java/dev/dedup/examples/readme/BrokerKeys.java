package dev.dedup.examples.readme;

import com.rabbitmq.client.Delivery;
import dev.dedup.DedupKeys;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import software.amazon.awssdk.services.sqs.model.Message;

/** The README's key functions per broker, compiled against each broker's own client (provided scope). */
final class BrokerKeys {
    private BrokerKeys() {}

    // readme:broker-keys
    // Kafka: a header the producer sets survives re-publishing; the record's coordinates identify one published record
    // (they collide after a topic is re-created within the retention).
    static final Function<ConsumerRecord<String, String>, String> KAFKA_HEADER_KEY =
            r -> new String(r.headers().lastHeader("message-id").value(), StandardCharsets.UTF_8);
    static final Function<ConsumerRecord<String, String>, String> KAFKA_OFFSET_KEY =
            r -> DedupKeys.of(r.topic(), String.valueOf(r.partition()), String.valueOf(r.offset()));

    // SQS: the message id is stable across redeliveries of one sent message (receipt handles are not).
    static final Function<Message, String> SQS_KEY = Message::messageId;

    // RabbitMQ: the message-id property, which the publisher must set.
    static final Function<Delivery, String> RABBIT_KEY = d -> d.getProperties().getMessageId();
    // end
}
