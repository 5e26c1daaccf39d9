/**
 * Spring Kafka glue: {@link dev.dedup.kafka.spring.IdempotentRecordListener} runs each record a listener container
 * delivers through {@link dev.dedup.IdempotentConsumer} and answers with Spring Kafka's semantics: it returns for a
 * record that took effect (the container commits it), throws a retryable exception for one that must come again (the
 * error handler seeks back to it and retries), and a non-retryable one for a record that never can (the error
 * handler's recoverer dead-letters it). {@link dev.dedup.kafka.spring.IdempotentBatchListener} does the same for a
 * batch container, reporting the first record that must come again or be dead-lettered with a
 * {@code BatchListenerFailedException}. {@link dev.dedup.kafka.spring.DedupErrorHandler} builds the matching
 * {@code DefaultErrorHandler}. Needs {@code org.springframework.kafka:spring-kafka} 4.0 on the class path (an
 * optional dependency of this module).
 */
package dev.dedup.kafka.spring;
