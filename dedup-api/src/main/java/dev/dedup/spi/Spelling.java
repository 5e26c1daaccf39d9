package dev.dedup.spi;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/** Finds the names a misspelt one was probably meant to be, for "did you mean ...?" in error messages. */
public final class Spelling {
    private static final int MAX_SUGGESTIONS = 3;

    private Spelling() {}

    /**
     * The candidates close to {@code given}, nearest first, at most three: case is ignored, and a typo may change,
     * add, drop or swap a few characters (about one per three characters of {@code given}).
     *
     * @param given the name as the user wrote it
     * @param candidates the names that exist
     * @return up to three candidates, nearest first, ties in alphabetical order; never {@code given} itself; empty
     *     when none is close
     */
    public static List<String> closest(String given, Collection<String> candidates) {
        String lower = given.toLowerCase(Locale.ROOT);
        int allowed = Math.max(1, Math.min(3, lower.length() / 3));
        record Scored(String name, int distance) {}
        List<Scored> near = new ArrayList<>();
        for (String candidate : candidates) {
            int distance = distance(lower, candidate.toLowerCase(Locale.ROOT));
            if (distance <= allowed && !candidate.equals(given)) {
                near.add(new Scored(candidate, distance));
            }
        }
        near.sort(Comparator.comparingInt(Scored::distance).thenComparing(Scored::name));
        List<String> names = new ArrayList<>();
        for (Scored each : near) {
            if (names.size() < MAX_SUGGESTIONS && !names.contains(each.name())) {
                names.add(each.name());
            }
        }
        return names;
    }

    /**
     * Words the closest candidates for an error message.
     *
     * @param given the name as the user wrote it
     * @param candidates the names that exist
     * @return {@code " Did you mean a or b?"}, with a leading space to append to a sentence, or an empty string when
     *     none is close
     */
    public static String didYouMean(String given, Collection<String> candidates) {
        List<String> names = closest(given, candidates);
        return names.isEmpty() ? "" : " Did you mean " + String.join(" or ", names) + "?";
    }

    /**
     * Edits needed to turn {@code a} into {@code b}: insertions, deletions, substitutions and swaps of two adjacent
     * characters (the optimal-string-alignment distance), so {@code namepsace} is one edit from {@code namespace}.
     */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
