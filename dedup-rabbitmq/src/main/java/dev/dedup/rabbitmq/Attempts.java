package dev.dedup.rabbitmq;

import com.rabbitmq.client.AMQP;
import java.util.HashMap;
import java.util.Map;

/** The count of failed attempts a message carries in a header, from one parking in the retry queue to the next. */
final class Attempts {
    static final String HEADER = "x-dedup-attempts";

    private Attempts() {}

    /** Failed attempts so far: 0 for a message never parked, or whose header is unreadable. */
    static int of(AMQP.BasicProperties properties) {
        Map<String, Object> headers = properties == null ? null : properties.getHeaders();
        Object value = headers == null ? null : headers.get(HEADER);
        if (value instanceof Number number) {
            return (int) Math.max(0, Math.min(Integer.MAX_VALUE, number.longValue()));
        }
        if (value != null) {
            // A header set by another client may arrive as a string (LongString).
            try {
                return Math.max(0, Integer.parseInt(value.toString().trim()));
            } catch (NumberFormatException e) {
                return 0;
            }
        }
        return 0;
    }

    /** The same properties, with {@code attempts} in the header and every other property kept. */
    static AMQP.BasicProperties with(AMQP.BasicProperties properties, int attempts) {
        AMQP.BasicProperties base = properties == null ? new AMQP.BasicProperties() : properties;
        Map<String, Object> headers = base.getHeaders() == null ? new HashMap<>() : new HashMap<>(base.getHeaders());
        headers.put(HEADER, attempts);
        return base.builder().headers(headers).build();
    }
}
