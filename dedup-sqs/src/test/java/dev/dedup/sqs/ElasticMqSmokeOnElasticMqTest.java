package dev.dedup.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;

class ElasticMqSmokeOnElasticMqTest {
    @Test
    void sendsAndReceives() {
        try (SqsClient sqs = ElasticMq.client()) {
            String queue = ElasticMq.createQueue(sqs, "smoke", Map.of());
            sqs.sendMessage(b -> b.queueUrl(queue).messageBody("hello"));
            assertThat(sqs.receiveMessage(b -> b.queueUrl(queue).waitTimeSeconds(1)).messages())
                    .extracting(m -> m.body()).containsExactly("hello");
        }
    }
}
