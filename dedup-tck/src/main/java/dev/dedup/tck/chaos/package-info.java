/**
 * Chaos runs with real consumer processes: a driver starts consumer JVMs, kills them with SIGKILL at random and
 * restarts them, and reads what each was doing when it died from a memory-mapped board the consumer writes as it
 * goes ({@link dev.dedup.tck.chaos.ChaosBoard}), which outlives the process.
 */
package dev.dedup.tck.chaos;
