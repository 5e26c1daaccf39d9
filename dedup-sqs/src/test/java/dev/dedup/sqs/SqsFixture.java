package dev.dedup.sqs;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/** One test's queues on ElasticMQ: a work queue whose redrive policy moves a message to its dead-letter queue. */
final class SqsFixture implements AutoCloseable {
    static final String KEY_ATTRIBUTE = "event-id";

    final SqsClient sqs;
    final String deadLetterQueue;
    final String queue;

    private SqsFixture(SqsClient sqs, String deadLetterQueue, String queue) {
        this.sqs = sqs;
        this.deadLetterQueue = deadLetterQueue;
        this.queue = queue;
    }

    /** A standard queue with a redrive policy of {@code maxReceiveCount}. */
    static SqsFixture standard(int maxReceiveCount) {
        return create(ElasticMq.client(), maxReceiveCount, false);
    }

    /** A FIFO queue (and FIFO dead-letter queue) with a redrive policy of {@code maxReceiveCount}. */
    static SqsFixture fifo(int maxReceiveCount) {
        return create(ElasticMq.client(), maxReceiveCount, true);
    }

    /** A standard queue read through a client with {@code overrides}, such as a fault-injecting interceptor. */
    static SqsFixture standard(int maxReceiveCount, ClientOverrideConfiguration overrides) {
        return create(ElasticMq.client(overrides), maxReceiveCount, false);
    }

    private static SqsFixture create(SqsClient sqs, int maxReceiveCount, boolean fifo) {
        Map<QueueAttributeName, String> none = Map.of();
        String dlq = fifo ? ElasticMq.createFifoQueue(sqs, "dlq", none) : ElasticMq.createQueue(sqs, "dlq", none);
        Map<QueueAttributeName, String> redrive = Map.of(QueueAttributeName.REDRIVE_POLICY,
                "{\"deadLetterTargetArn\":\"" + ElasticMq.arnOf(sqs, dlq) + "\",\"maxReceiveCount\":\""
                        + maxReceiveCount + "\"}");
        String queue = fifo ? ElasticMq.createFifoQueue(sqs, "work", redrive)
                : ElasticMq.createQueue(sqs, "work", redrive);
        return new SqsFixture(sqs, dlq, queue);
    }

    /** Sends {@code body} with {@code key} in the {@value #KEY_ATTRIBUTE} attribute; returns the message id. */
    String send(String key, String body) {
        return sqs.sendMessage(b -> b.queueUrl(queue).messageBody(body).messageAttributes(Map.of(KEY_ATTRIBUTE,
                MessageAttributeValue.builder().dataType("String").stringValue(key).build()))).messageId();
    }

    /** Sends {@code body} to the FIFO queue in {@code group}, deduplicated by {@code body}. */
    String sendToGroup(String group, String body) {
        return sqs.sendMessage(b -> b.queueUrl(queue).messageBody(body).messageGroupId(group)
                .messageDeduplicationId(body)).messageId();
    }

    /** Messages on the work queue, visible or not. */
    int onQueue() {
        Map<QueueAttributeName, String> attributes = sqs.getQueueAttributes(b -> b.queueUrl(queue).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE)).attributes();
        return Integer.parseInt(attributes.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES))
                + Integer.parseInt(attributes.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE));
    }

    /** Receives what the dead-letter queue holds within {@code wait}, with all attributes, deleting nothing. */
    List<Message> deadLetters(Duration wait) {
        long end = System.nanoTime() + wait.toNanos();
        List<Message> received = new ArrayList<>();
        do {
            received.addAll(sqs.receiveMessage(b -> b.queueUrl(deadLetterQueue).maxNumberOfMessages(10)
                    .waitTimeSeconds(1).visibilityTimeout(60).messageAttributeNames("All")).messages());
        } while (received.isEmpty() && System.nanoTime() < end);
        return received;
    }

    @Override
    public void close() {
        sqs.deleteQueue(b -> b.queueUrl(queue));
        sqs.deleteQueue(b -> b.queueUrl(deadLetterQueue));
        sqs.close();
    }
}
