package dev.dedup.rabbitmq.spring;

import com.rabbitmq.client.AMQP;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;
import org.springframework.amqp.rabbit.support.MessagePropertiesConverter;

/**
 * The AMQP properties a message arrived with, rebuilt from Spring's view of them. On the way in, Spring's converter
 * moves {@code delivery-mode}, {@code user-id} and the {@code x-delay} header into received-* fields, which its way
 * out ignores: a copy published from its output (a parked one) would be transient and lose its user id.
 */
final class ReceivedProperties {
    private static final MessagePropertiesConverter CONVERTER = new DefaultMessagePropertiesConverter();

    private ReceivedProperties() {}

    static AMQP.BasicProperties of(MessageProperties received) {
        AMQP.BasicProperties converted = CONVERTER.fromMessageProperties(received, StandardCharsets.UTF_8.name());
        AMQP.BasicProperties.Builder properties = converted.builder();
        if (received.getReceivedDeliveryMode() != null) {
            properties.deliveryMode(MessageDeliveryMode.toInt(received.getReceivedDeliveryMode()));
        }
        if (received.getReceivedUserId() != null) {
            properties.userId(received.getReceivedUserId());
        }
        if (received.getReceivedDelayLong() != null) {
            Map<String, Object> headers = converted.getHeaders() == null ? new HashMap<>()
                    : new HashMap<>(converted.getHeaders());
            headers.put(MessageProperties.X_DELAY, received.getReceivedDelayLong());
            properties.headers(headers);
        }
        return properties.build();
    }
}
