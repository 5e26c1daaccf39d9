package dev.dedup.outbox;

import java.util.HashMap;
import java.util.Map;

/** The {@code key=value} arguments the chaos processes get after their board's file. */
final class ProcessArguments {
    private ProcessArguments() {}

    /** {@return the arguments after the first (the board's file), by key} */
    static Map<String, String> afterBoard(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String[] pair = args[i].split("=", 2);
            options.put(pair[0], pair[1]);
        }
        return options;
    }
}
