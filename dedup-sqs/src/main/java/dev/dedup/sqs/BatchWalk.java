package dev.dedup.sqs;

import dev.dedup.IdempotentConsumer;
import dev.dedup.MessageHandler;
import dev.dedup.ProcessingOutcome;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

/**
 * Walks one received batch through an ordered run of the idempotent consumer ({@code processInOrder}, one
 * {@code claimAll} for the batch) and says what each message needs, for the receive loop and the Lambda-style handler
 * alike.
 *
 * <p>The run stops at the first message that must come again; a standard queue has no order, so the walk goes on
 * with the messages after it (one more {@code claimAll}, only when something failed). A FIFO queue keeps order per
 * message group: the messages are walked group by group, each group in the order received, and a group stops at its
 * first message that must come again, its later messages not run.
 */
final class BatchWalk {
    private BatchWalk() {}

    /** What a message needs on the queue. */
    enum Need {
        /** Took effect, here or before: delete it. */
        DONE,
        /** Can never take effect: dead-letter it. */
        FINAL,
        /** Its handler failed and may succeed later: retry after the back-off. */
        RETRY,
        /** Another consumer holds its key: retry once that lease ends. */
        HELD,
        /** Not run: an earlier message of its FIFO group must come first. */
        BLOCKED
    }

    /** One message's walk: its outcome (empty when not run) and what it needs. */
    record Step<R>(Message message, Optional<ProcessingOutcome<R>> outcome, Need need) {}

    /** An ordered run of the consumer, as {@code IdempotentConsumer.processInOrder} does it. */
    @FunctionalInterface
    interface Run<R> {
        List<ProcessingOutcome<R>> run(List<Message> messages);
    }

    /** The run of {@code consumer}: one settle per message, or with {@code settleOnce} one per batch. */
    static <R> Run<R> ordered(IdempotentConsumer<Message, R> consumer,
            MessageHandler<? super Message, ? extends R> handler, boolean settleOnce) {
        return settleOnce ? batch -> consumer.processInOrderSettlingOnce(batch, handler)
                : batch -> consumer.processInOrder(batch, handler);
    }

    /**
     * Walks {@code messages} (as received) with {@code run}.
     *
     * @return one step per message, in the order received
     */
    static <R> List<Step<R>> walk(List<Message> messages, boolean fifo, Run<R> run) {
        Map<Message, Step<R>> steps = new IdentityHashMap<>();
        List<Message> remaining = fifo ? byGroup(messages) : messages;
        while (!remaining.isEmpty()) {
            List<ProcessingOutcome<R>> outcomes = run.run(remaining);
            for (int i = 0; i < outcomes.size(); i++) {
                steps.put(remaining.get(i), new Step<>(remaining.get(i), Optional.of(outcomes.get(i)),
                        need(outcomes.get(i))));
            }
            if (outcomes.size() >= remaining.size()) {
                break;
            }
            // The run stopped at its last outcome: its later messages were not run (their claims were released).
            Message stopped = remaining.get(outcomes.size() - 1);
            Set<String> blockedGroups = new HashSet<>();
            if (fifo) {
                blockedGroups.add(groupOf(stopped));
            }
            List<Message> next = new ArrayList<>();
            for (Message message : remaining.subList(outcomes.size(), remaining.size())) {
                if (blockedGroups.contains(groupOf(message))) {
                    steps.put(message, new Step<>(message, Optional.empty(), Need.BLOCKED));
                } else {
                    next.add(message);
                }
            }
            remaining = next;
        }
        List<Step<R>> inOrder = new ArrayList<>(messages.size());
        for (Message message : messages) {
            inOrder.add(steps.get(message));
        }
        return inOrder;
    }

    /** What an outcome means for the message, by the rules of {@link MessageOutcome.Disposition}. */
    static Need need(ProcessingOutcome<?> outcome) {
        if (outcome instanceof ProcessingOutcome.Processed || outcome instanceof ProcessingOutcome.AlreadyProcessed
                || outcome instanceof ProcessingOutcome.LeaseLost) {
            return Need.DONE;
        }
        if (outcome instanceof ProcessingOutcome.InProgressElsewhere) {
            return Need.HELD;
        }
        if (outcome instanceof ProcessingOutcome.Failed<?> failed && failed.key() != null && !failed.keyKept()) {
            return Need.RETRY;
        }
        // AlreadyFailed, KeyReused, a kept failure, or no key at all: no receive of it can ever take effect.
        return Need.FINAL;
    }

    /** The messages grouped by message group, the groups in the order of their first message, each in order. */
    private static List<Message> byGroup(List<Message> messages) {
        Map<String, List<Message>> groups = new LinkedHashMap<>();
        for (Message message : messages) {
            groups.computeIfAbsent(groupOf(message), group -> new ArrayList<>()).add(message);
        }
        List<Message> ordered = new ArrayList<>(messages.size());
        groups.values().forEach(ordered::addAll);
        return ordered;
    }

    /** The FIFO message group; a message of a standard queue has none, and is a group of its own. */
    static String groupOf(Message message) {
        String group = message.attributes().get(MessageSystemAttributeName.MESSAGE_GROUP_ID);
        return group != null ? group : "\u0000" + message.messageId();
    }
}
