package dev.turnstile.chaos;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Samples the machine's 1-minute load average every 15 s during a long run, so the report can say
 * how busy the machine was (other builds share it, and timings depend on it).
 */
final class LoadSampler {
    private final List<Double> samples = new ArrayList<>();
    private final Thread thread;

    private LoadSampler() {
        thread = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                sample();
                try {
                    Thread.sleep(15_000);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "load-sampler");
        thread.setDaemon(true);
    }

    static LoadSampler start() {
        LoadSampler s = new LoadSampler();
        s.thread.start();
        return s;
    }

    private void sample() {
        try {
            String first = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0];
            synchronized (samples) {
                samples.add(Double.parseDouble(first));
            }
        } catch (Exception e) {
            // not Linux, or unreadable: the report then says so
        }
    }

    /** Stops sampling and describes the machine: cores and the load average seen. */
    String stop() {
        thread.interrupt();
        sample();
        int cores = Runtime.getRuntime().availableProcessors();
        synchronized (samples) {
            if (samples.isEmpty()) {
                return cores + "-core machine (load average unknown)";
            }
            double mean = samples.stream().mapToDouble(Double::doubleValue).average().orElse(0);
            double max = samples.stream().mapToDouble(Double::doubleValue).max().orElse(0);
            return String.format("%d-core machine shared with other builds (1-minute load average over the run: mean %.1f, "
                    + "max %.1f, %d samples)", cores, mean, max, samples.size());
        }
    }
}
