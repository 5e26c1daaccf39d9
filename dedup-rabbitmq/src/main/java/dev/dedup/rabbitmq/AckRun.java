package dev.dedup.rabbitmq;

import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Acks that go out together: a run of deliveries this callback acked, sent as one {@code basic.ack} with
 * {@code multiple} when the run is full, when its delay is over, or before a delivery is held back. A multiple ack
 * settles every outstanding delivery of the channel up to its tag, so a run only grows while every delivery of the
 * channel so far came to this callback in order and none is held back for a delayed nack; otherwise each ack goes
 * out alone, as without a run. A delivery is acked only after its outcome is stored, so a crash before the run goes
 * out only redelivers messages that deduplication then acks.
 */
final class AckRun {
    private static final Logger log = LoggerFactory.getLogger(AckRun.class);

    private final Channel channel;
    private final int maxSize;
    private final long maxDelayMillis;
    private final ScheduledExecutorService timer;
    private long lastSeenTag;
    private boolean inOrder = true;
    private int heldBack;
    private long runEnd;
    private int runSize;
    private ScheduledFuture<?> sendLater;

    /**
     * @param channel the channel the deliveries came on
     * @param maxSize the most acks one run holds, 1 for every ack alone
     * @param maxDelayMillis the longest an ack waits for its run to fill
     * @param timer where a run's delay runs out
     */
    AckRun(Channel channel, int maxSize, long maxDelayMillis, ScheduledExecutorService timer) {
        this.channel = channel;
        this.maxSize = maxSize;
        this.maxDelayMillis = maxDelayMillis;
        this.timer = timer;
    }

    /** Notes a delivery as it arrives, before its outcome: a gap in the tags means another consumer shares them. */
    synchronized void arrived(long tag) {
        if (tag != lastSeenTag + 1) {
            inOrder = false;
        }
        lastSeenTag = Math.max(lastSeenTag, tag);
    }

    /** Acks {@code tag}: in the run when one may grow, else alone at once. */
    synchronized void ack(long tag) throws IOException {
        if (maxSize == 1 || !inOrder || heldBack > 0) {
            send();
            channel.basicAck(tag, false);
            return;
        }
        runEnd = tag;
        runSize++;
        if (runSize >= maxSize) {
            send();
        } else if (sendLater == null) {
            sendLater = timer.schedule(this::sendAfterDelay, maxDelayMillis, TimeUnit.MILLISECONDS);
        }
    }

    /** A delivery will be settled later, by a delayed nack: the run goes out now and stops growing until then. */
    synchronized void holdBack() throws IOException {
        send();
        heldBack++;
    }

    /**
     * A delivery left the callback unsettled (an {@link Error} out of the handler): it stays outstanding, so no run
     * may pass it any more; the run so far goes out.
     */
    synchronized void leftUnsettled() {
        inOrder = false;
        try {
            send();
        } catch (IOException | RuntimeException e) {
            log.debug("a run of acks was not sent", e);
        }
    }

    /** The delivery held back is settled. */
    synchronized void settledHeldBack() {
        heldBack--;
    }

    /** Sends the run, if any. */
    synchronized void send() throws IOException {
        if (sendLater != null) {
            sendLater.cancel(false);
            sendLater = null;
        }
        if (runSize > 0) {
            long end = runEnd;
            runSize = 0;
            channel.basicAck(end, true);
        }
    }

    private synchronized void sendAfterDelay() {
        sendLater = null;
        try {
            send();
        } catch (IOException | RuntimeException e) {
            // The channel closed: the broker requeues what was not acked, and deduplication acks it on redelivery.
            log.debug("a run of acks was not sent", e);
        }
    }
}
