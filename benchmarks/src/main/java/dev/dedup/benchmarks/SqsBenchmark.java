package dev.dedup.benchmarks;

import dev.dedup.DedupStore;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.benchmarks.fixture.BenchStore;
import dev.dedup.benchmarks.fixture.StoreFixture;
import dev.dedup.sqs.MessageOutcome;
import dev.dedup.sqs.SqsMessageProcessor;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

/**
 * An SQS receive loop on ElasticMQ (an SQS-compatible server, not Amazon SQS, started in the benchmark's JVM on
 * {@value #PORT}), with and without dedup. One operation is one receive of up to 10 messages, each handled by a
 * trivial handler (a counter), and one {@code DeleteMessageBatch}; before each operation, outside the measurement,
 * 10 fresh messages are sent. The primary score is operations/s; the {@code messages} secondary score
 * ({@link Messages}) is messages/s, the figure docs/benchmarks.md shows.
 *
 * <p>The {@code loop} parameter picks the loop: {@code no-dedup} (receive, handler, delete: the reference), or
 * {@code processor-<store>} ({@link SqsMessageProcessor#poll}: the same receive, one {@code claimAll}, the handler
 * and a {@code complete} per message, the delete; its visibility heartbeat never fires, the batches are short), or
 * {@code batch-<store>} (the same with {@code settleInBatches()}: one {@code claimAll} and one {@code settleAll} per
 * batch).
 * Keys are the messages' ids, fresh in every operation; every outcome is checked. Run it on its own, after
 * {@code mvn -pl benchmarks -am package -DskipTests}:
 *
 * <pre>
 * java -cp benchmarks/target/dedup-benchmarks.jar org.openjdk.jmh.Main SqsBenchmark -f 1 -wi 1 -w 2s -i 3 -r 2s
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class SqsBenchmark {
    /** Beside the tests' 19324, so a benchmark and a test run can share the machine. */
    static final int PORT = 19325;
    private static final int BATCH = 10;

    @Param({"no-dedup", "processor-memory", "processor-redis", "batch-redis", "processor-postgres", "batch-postgres"})
    public String loop;

    private SQSRestServer server;
    private SqsClient sqs;
    private String queue;
    private StoreFixture fixture;
    private String namespace;
    private DedupStore store;
    private SqsMessageProcessor<Void> processor;
    private long handled;
    private long sent;

    /** The messages counter, reported by JMH as the {@code messages} score in messages/s. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Messages {
        public long messages;

        @Setup(Level.Iteration)
        public void reset() {
            messages = 0;
        }
    }

    @Setup(Level.Trial)
    public void open() {
        server = SQSRestServerBuilder.withPort(PORT).withInterface("127.0.0.1").start();
        server.waitUntilStarted();
        sqs = SqsClient.builder().endpointOverride(URI.create("http://127.0.0.1:" + PORT)).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("x", "x")))
                .httpClient(UrlConnectionHttpClient.create()).build();
        String dlq = sqs.createQueue(b -> b.queueName("bench-dlq")).queueUrl();
        String dlqArn = sqs.getQueueAttributes(b -> b.queueUrl(dlq).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
        queue = sqs.createQueue(b -> b.queueName("bench").attributes(Map.of(QueueAttributeName.REDRIVE_POLICY,
                "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":\"5\"}"))).queueUrl();
        String description = "no store";
        if (!loop.equals("no-dedup")) {
            boolean batch = loop.startsWith("batch-");
            fixture = BenchStore.named(loop.substring(loop.indexOf('-') + 1)).open(0);
            namespace = Trials.newNamespace();
            store = fixture.openStore(namespace);
            description = fixture.description();
            SqsMessageProcessor.Builder<Void> builder = SqsMessageProcessor.builder(sqs, queue, store,
                    ResultCodec.none());
            if (batch) {
                builder.settleInBatches();
            }
            processor = builder.build();
        }
        System.out.println("\n[bench] sqs loop " + loop + ": ElasticMQ in this JVM on port " + PORT + "; store: "
                + description);
    }

    @TearDown(Level.Trial)
    public void close() {
        System.out.printf("%n[bench] sqs loop %s handled %,d of %,d messages sent%n", loop, handled, sent);
        try {
            if (processor != null) {
                processor.close();
                store.close();
                fixture.deleteNamespace(namespace);
                fixture.close();
            }
        } finally {
            sqs.close();
            server.stopAndWait();
        }
    }

    /** Ten fresh messages, outside the measured operation (an operation takes milliseconds). */
    @Setup(Level.Invocation)
    public void send() {
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>(BATCH);
        for (int i = 0; i < BATCH; i++) {
            entries.add(SendMessageBatchRequestEntry.builder().id(Integer.toString(i)).messageBody("m" + sent++)
                    .build());
        }
        sqs.sendMessageBatch(b -> b.queueUrl(queue).entries(entries));
    }

    /** One receive, handled and deleted; returns how many messages it had. */
    @Benchmark
    public int poll(Messages counted) {
        int messages = loop.equals("no-dedup") ? pollWithoutDedup() : pollThroughProcessor();
        counted.messages += messages;
        return messages;
    }

    private int pollWithoutDedup() {
        List<Message> batch = sqs.receiveMessage(b -> b.queueUrl(queue).maxNumberOfMessages(BATCH)
                .waitTimeSeconds(1).visibilityTimeout(30)).messages();
        if (batch.isEmpty()) {
            return 0;
        }
        List<DeleteMessageBatchRequestEntry> entries = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            handle(batch.get(i));
            entries.add(DeleteMessageBatchRequestEntry.builder().id(Integer.toString(i))
                    .receiptHandle(batch.get(i).receiptHandle()).build());
        }
        if (!sqs.deleteMessageBatch(b -> b.queueUrl(queue).entries(entries)).failed().isEmpty()) {
            throw new IllegalStateException("a delete failed");
        }
        return batch.size();
    }

    private int pollThroughProcessor() {
        List<MessageOutcome<Void>> outcomes = processor.poll(java.time.Duration.ofSeconds(1), this::handle);
        for (MessageOutcome<Void> outcome : outcomes) {
            if (!(outcome.outcome().orElse(null) instanceof ProcessingOutcome.Processed)) {
                throw new IllegalStateException("a fresh message was not processed: " + outcome);
            }
        }
        return outcomes.size();
    }

    private Void handle(Message message) {
        handled++;
        return null;
    }
}
