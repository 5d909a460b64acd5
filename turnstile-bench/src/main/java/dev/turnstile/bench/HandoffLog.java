package dev.turnstile.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What one {@link HandoffChild} wrote: its pid, CPU and wall time over the measured loop, and the
 * start and end of each hold in {@link System#nanoTime()}, with the index of the child's thread
 * that held (0 when a line has no third column).
 */
record HandoffLog(long pid, long cpuNanos, long wallNanos, long[] acquired, long[] releasing, int[] thread) {

    static HandoffLog read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        long pid = value(lines.get(0), "pid");
        long cpu = value(lines.get(1), "cpu_nanos");
        long wall = value(lines.get(2), "wall_nanos");
        int n = lines.size() - 3;
        long[] acquired = new long[n];
        long[] releasing = new long[n];
        int[] thread = new int[n];
        for (int i = 0; i < n; i++) {
            String[] parts = lines.get(i + 3).split(" ");
            acquired[i] = Long.parseLong(parts[0]);
            releasing[i] = Long.parseLong(parts[1]);
            thread[i] = parts.length > 2 ? Integer.parseInt(parts[2]) : 0;
        }
        return new HandoffLog(pid, cpu, wall, acquired, releasing, thread);
    }

    private static long value(String line, String key) {
        if (!line.startsWith(key + " ")) {
            throw new IllegalArgumentException("expected '" + key + " <n>', got '" + line + "'");
        }
        return Long.parseLong(line.substring(key.length() + 1).trim());
    }
}
