package dev.dedup.outbox;

import dev.dedup.tck.chaos.ChaosBoard;
import dev.dedup.tck.chaos.ConsumerProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * Processes of one main class that a chaos driver kills with SIGKILL at random every 1-2 s and replaces, and restarts
 * when they die by themselves, as a supervisor would. Each process gets a board of its own and {@code seed=}. A
 * process still in its starting phase is not a victim yet: a kill waits until one is at work, so kills land in the
 * work, not in JVM start-ups (which take most of a second or two on a busy machine).
 */
final class ProcessFleet {
    private final String name;
    private final Class<?> main;
    private final int slots;
    private final Path dir;
    private final Path log;
    private final List<String> arguments;
    private final Random random;
    private final List<ConsumerProcess> all = new ArrayList<>();
    private final List<ConsumerProcess> live = new ArrayList<>();
    private final Map<Long, Integer> killsByPhase = new TreeMap<>();
    private int kills;
    private int deaths;
    private long nextKill;
    private final long startingPhase;

    /** A fleet whose processes write {@code startingPhase} on their board until they work (-1: at work at once). */
    ProcessFleet(String name, Class<?> main, int slots, long startingPhase, Path dir, List<String> arguments,
            Random random) {
        this.name = name;
        this.startingPhase = startingPhase;
        this.main = main;
        this.slots = slots;
        this.dir = dir;
        this.log = dir.resolve(name + "s.log");
        this.arguments = arguments;
        this.random = random;
    }

    /** Starts {@code size} processes and schedules the first kill. */
    void start(int size) {
        for (int i = 0; i < size; i++) {
            live.add(startOne());
        }
        scheduleKill();
    }

    /** Kills one working process at random if its time has come, and starts its replacement. */
    void killWhenDue() throws InterruptedException {
        if (System.currentTimeMillis() < nextKill) {
            return;
        }
        List<ConsumerProcess> working = live.stream()
                .filter(process -> process.board().get(ChaosBoard.PHASE) != startingPhase).toList();
        if (working.isEmpty()) {
            return;
        }
        ConsumerProcess victim = working.get(random.nextInt(working.size()));
        live.remove(victim);
        killsByPhase.merge(victim.kill(), 1, Integer::sum);
        kills++;
        live.add(startOne());
        scheduleKill();
    }

    /** Replaces the processes that ended by themselves (a relay's halt, a consumer's error). */
    void restartDead() {
        for (int i = 0; i < live.size(); i++) {
            if (!live.get(i).isAlive()) {
                deaths++;
                live.set(i, startOne());
            }
        }
    }

    /** Kills every process still running. */
    void killAll() throws InterruptedException {
        for (ConsumerProcess process : all) {
            if (process.isAlive()) {
                process.kill();
            }
        }
    }

    /** {@return a counter summed over every process's board, the killed ones' included} */
    long sum(int slot) {
        return all.stream().mapToLong(process -> process.board().get(slot)).sum();
    }

    int kills() {
        return kills;
    }

    /** {@return the processes that ended by themselves and were restarted} */
    int deaths() {
        return deaths;
    }

    int processes() {
        return all.size();
    }

    Map<Long, Integer> killsByPhase() {
        return killsByPhase;
    }

    Path log() {
        return log;
    }

    private ConsumerProcess startOne() {
        int serial = all.size() + 1;
        List<String> withSeed = new ArrayList<>(arguments);
        withSeed.add("seed=" + random.nextLong());
        ConsumerProcess process = ConsumerProcess.start(name + "-" + serial, main,
                dir.resolve(name + "-" + serial + ".board"), slots, log, withSeed);
        all.add(process);
        return process;
    }

    private void scheduleKill() {
        nextKill = System.currentTimeMillis() + 1_000 + random.nextInt(1_000);
    }
}
