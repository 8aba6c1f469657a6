package io.streamsql.bench.nexmark;

import org.apache.flink.table.functions.ScalarFunction;

/**
 * Nexmark q14's user-defined function as Flink nexmark writes it
 * (com.github.nexmark.flink.udf.CountChar): the number of times the first
 * character of {@code character} occurs in {@code s}, 0 for a NULL s. The
 * benchmark runs q14 on Flink with it, where streamsql runs the same
 * function built from examples/udf/count_char into WebAssembly.
 */
public class CountChar extends ScalarFunction {
    public long eval(String s, String character) {
        long count = 0;
        if (s != null && character != null && !character.isEmpty()) {
            char want = character.charAt(0);
            for (int i = 0; i < s.length(); i++) {
                if (s.charAt(i) == want) {
                    count++;
                }
            }
        }
        return count;
    }
}
