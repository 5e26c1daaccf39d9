package dev.dedup.tck.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A consumer process's figures in a memory-mapped file: one slot for where it stands (its phase) and counters. The
 * consumer writes them as it goes; the driver reads them after the process is stopped or killed. Writes to a shared
 * mapping land in the page cache at once, so a SIGKILL loses none of them.
 *
 * <p>Slot 0 is the phase; the callers number their counters from 1.
 */
public final class ChaosBoard {
    /** The slot that holds the consumer's current phase. */
    public static final int PHASE = 0;

    private final MappedByteBuffer slots;
    private final int size;

    private ChaosBoard(MappedByteBuffer slots, int size) {
        this.slots = slots;
        this.size = size;
    }

    /**
     * Maps {@code file} (created, or opened as it is), with room for {@code size} slots.
     *
     * @param file the board's file, one per consumer process
     * @param size the number of slots, the phase included
     * @return the board
     */
    public static ChaosBoard open(Path file, int size) {
        if (size < 1) {
            throw new IllegalArgumentException("size must be at least 1 (the phase), but was " + size);
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            return new ChaosBoard(channel.map(FileChannel.MapMode.READ_WRITE, 0, (long) size * Long.BYTES), size);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map the chaos board " + file, e);
        }
    }

    /**
     * Sets a slot.
     *
     * @param slot the slot, 0 for the phase
     * @param value its new value
     */
    public synchronized void set(int slot, long value) {
        slots.putLong(offset(slot), value);
    }

    /**
     * Adds to a counter.
     *
     * @param slot the counter's slot
     * @param delta what to add
     */
    public synchronized void add(int slot, long delta) {
        int offset = offset(slot);
        slots.putLong(offset, slots.getLong(offset) + delta);
    }

    /**
     * Reads a slot.
     *
     * @param slot the slot, 0 for the phase
     * @return its value
     */
    public synchronized long get(int slot) {
        return slots.getLong(offset(slot));
    }

    private int offset(int slot) {
        if (slot < 0 || slot >= size) {
            throw new IndexOutOfBoundsException("slot " + slot + " is outside the board's 0.." + (size - 1));
        }
        return slot * Long.BYTES;
    }
}
