package dev.turnstile.bench;

import java.util.Arrays;

/** A growable list of primitive longs: recording a latency must not allocate a boxed Long. */
final class LongList {
    private long[] values;
    private int size;

    LongList(int capacity) {
        values = new long[Math.max(16, capacity)];
    }

    void add(long v) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = v;
    }

    int size() {
        return size;
    }

    long[] toArray() {
        return Arrays.copyOf(values, size);
    }
}
