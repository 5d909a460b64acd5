package dev.turnstile.examples.scheduled;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One instance of the example app in its own JVM: its output is copied to a log file, and its
 * {@code TICK} lines go to a queue shared by all instances, stamped with the time they were read.
 */
final class AppInstance implements AutoCloseable {
    /** One run of the job, as the instance printed it. */
    record Tick(long second, String instance, long fence, long readAtMillis) {}

    final String id;
    private final Process process;
    private final CountDownLatch ready = new CountDownLatch(1);
    private final List<String> lines = new ArrayList<>();
    private volatile int port = -1;
    private volatile long readyAtMillis;

    AppInstance(String id, List<String> command, Path log, BlockingQueue<Tick> ticks) throws IOException {
        this.id = id;
        Files.createDirectories(log.getParent());
        this.process = new ProcessBuilder(command).redirectErrorStream(true).start();
        Thread reader = new Thread(() -> read(log, ticks), "output of " + id);
        reader.setDaemon(true);
        reader.start();
    }

    private void read(Path log, BlockingQueue<Tick> ticks) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
             PrintWriter out = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8), true)) {
            for (String line; (line = in.readLine()) != null; ) {
                long now = System.currentTimeMillis();
                out.println(line);
                synchronized (lines) {
                    lines.add(line);
                }
                String[] f = line.trim().split(" ");
                if (f.length == 4 && f[0].equals("TICK")) {
                    ticks.add(new Tick(Long.parseLong(f[1]), f[2], Long.parseLong(f[3]), now));
                } else if (f.length == 3 && f[0].equals("READY")) {
                    port = Integer.parseInt(f[2]);
                    readyAtMillis = now;
                    ready.countDown();
                }
            }
        } catch (IOException e) {
            // The process died: its output ends here.
        }
    }

    /** Waits for the READY line; fails with the output so far if the app died or took too long. */
    void awaitReady(Duration timeout) throws InterruptedException {
        if (!ready.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("instance " + id + " printed no READY line within " + timeout
                    + (process.isAlive() ? "" : " (it exited with " + process.exitValue() + ")") + "; its output:\n" + output());
        }
    }

    int port() {
        return port;
    }

    long readyAtMillis() {
        return readyAtMillis;
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** SIGKILL: no shutdown hook, no release; the lease stays in the store until its TTL. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    String output() {
        synchronized (lines) {
            return String.join("\n", lines);
        }
    }

    /** SIGTERM (a graceful shutdown), then SIGKILL if it hangs. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
