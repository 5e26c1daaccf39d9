/**
 * Spring AMQP glue: {@link dev.dedup.rabbitmq.spring.IdempotentMessageListener} runs a Spring listener container's
 * deliveries through {@link dev.dedup.rabbitmq.IdempotentDeliverCallback}, for a container set up directly or a
 * {@code @RabbitListener} method with manual acks. Needs {@code org.springframework.amqp:spring-rabbit} on the class
 * path (an optional dependency of this module).
 */
package dev.dedup.rabbitmq.spring;
