package dev.dedup.sqs;

import java.net.URI;
import java.util.Map;
import java.util.UUID;
import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * ElasticMQ, an SQS-compatible server (not Amazon SQS), run in this JVM on a fixed port for every test class of the
 * module: started on first use, stopped with the JVM.
 */
final class ElasticMq {
    /** Below the ephemeral range, so no client socket takes it first; free on the build machines. */
    static final int PORT = 19324;
    static final URI ENDPOINT = URI.create("http://127.0.0.1:" + PORT);

    private static SQSRestServer server;

    private ElasticMq() {}

    /** Starts the server once per JVM. */
    static synchronized void start() {
        if (server == null) {
            server = SQSRestServerBuilder.withPort(PORT).withInterface("127.0.0.1").start();
            server.waitUntilStarted();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> server.stopAndWait()));
        }
    }

    /** A client of the server; the caller closes it. */
    static SqsClient client() {
        return client(ClientOverrideConfiguration.builder().build());
    }

    /** A client of the server with {@code overrides} (interceptors, retries); the caller closes it. */
    static SqsClient client(ClientOverrideConfiguration overrides) {
        start();
        return connect(overrides);
    }

    /** A client of the server another JVM runs, such as a chaos run's consumer process; the caller closes it. */
    static SqsClient connect(ClientOverrideConfiguration overrides) {
        return SqsClient.builder()
                .endpointOverride(ENDPOINT)
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("x", "x")))
                .httpClient(UrlConnectionHttpClient.create())
                .overrideConfiguration(overrides)
                .build();
    }

    /** A new queue named from {@code prefix} with {@code attributes}; returns its URL. */
    static String createQueue(SqsClient sqs, String prefix, Map<QueueAttributeName, String> attributes) {
        return createQueue(sqs, prefix, attributes, false);
    }

    /** A new FIFO queue (its name ends in {@code .fifo}) named from {@code prefix}; returns its URL. */
    static String createFifoQueue(SqsClient sqs, String prefix, Map<QueueAttributeName, String> attributes) {
        return createQueue(sqs, prefix, attributes, true);
    }

    private static String createQueue(SqsClient sqs, String prefix, Map<QueueAttributeName, String> attributes,
            boolean fifo) {
        String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8) + (fifo ? ".fifo" : "");
        Map<QueueAttributeName, String> all = new java.util.HashMap<>(attributes);
        if (fifo) {
            all.put(QueueAttributeName.FIFO_QUEUE, "true");
        }
        return sqs.createQueue(b -> b.queueName(name).attributes(all)).queueUrl();
    }

    /** The ARN of the queue at {@code queueUrl}, for a redrive policy. */
    static String arnOf(SqsClient sqs, String queueUrl) {
        return sqs.getQueueAttributes(b -> b.queueUrl(queueUrl).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
    }
}
