package dev.turnstile.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ArrayDeque;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JVM's side of the guard: a small process of its own ({@code guard.pl}, perl-base only) that
 * starts the command in a process group of its own and stops it, and everything it started, when
 * the lease runs out, whether or not this JVM still runs. This JVM tells it, over a Unix socket,
 * until when the lease is known to be held; if those messages stop (the JVM is frozen) the guard
 * stops the command by the last deadline it was given, and if the socket closes (the JVM died) it
 * stops it at once.
 *
 * <p>The guard answers every message with {@code ack}. A guard that does not answer within
 * {@link #ACK_TIMEOUT} is taken for frozen: a kill or stop request then has this JVM kill the
 * command's group, every descendant of the guard process (orphans included, the guard being their
 * subreaper on Linux) and the guard itself.
 *
 * <p>Deadlines are absolute {@code System.nanoTime()} values (CLOCK_MONOTONIC on Linux) when the
 * guard proved, as it connected, that it reads the same clock; otherwise relative (see guard.pl).
 *
 * <p>The guard is the command's parent: its exit code is the command's (128 + N for signal N).
 *
 * <p>Why one class past 400 lines: the protocol with the guard process (each message, its
 * {@code ack}, the reader of its reports and the kill of a guard that stopped answering) shares one
 * socket and one record of unanswered messages; split, each part would need the others' locking.
 */
final class Guard {
    private static final Logger LOG = LoggerFactory.getLogger(Guard.class);
    private static final String SCRIPT = loadScript();
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** How long a guard may take to answer before this JVM acts without it. */
    static final Duration ACK_TIMEOUT = Duration.ofMillis(400);
    /**
     * The same for a stop request (a signal to turnstile), which is not urgent for the lock: a
     * longer bound keeps a guard slowed by a loaded host from having its command SIGKILLed.
     */
    static final Duration STOP_ACK_TIMEOUT = Duration.ofSeconds(1);
    /** {@link #waitFor()}: the guard refused to start the command, or was told not to. */
    static final int NOT_STARTED = -2;
    /** {@link #waitFor()}: the guard died, or this JVM killed it; the command tree was killed. */
    static final int GUARD_GONE = -1;

    private final Process process;
    private final SocketChannel channel;
    private final Thread reader;
    private final CompletableFuture<String> hello = new CompletableFuture<>();
    private volatile long helloReceivedAt;
    private volatile boolean absolute;
    private volatile boolean subreaper;
    private volatile boolean started;
    private volatile long commandPid = -1;
    /** The command's exit code as the guard reported it; null until it does. */
    private volatile @Nullable Integer reportedExit;
    /** Why the guard did not start the command; null unless it refused. */
    private volatile @Nullable String refusal;
    private final AtomicBoolean killedByJvm = new AtomicBoolean();
    private final Object writing = new Object();
    /** Send times of the messages not answered yet, oldest first (guarded by itself). */
    private final ArrayDeque<Long> unanswered = new ArrayDeque<>();
    private long sent;
    private long answered;

    private Guard(Process process, SocketChannel channel) {
        this.process = process;
        this.channel = channel;
        this.reader = new Thread(this::readReports, "turnstile-guard-reader");
        this.reader.setDaemon(true);
        this.reader.start();
    }

    /** The guard could not be started or did not come up; the command was not started. */
    static final class UnavailableException extends Exception {
        UnavailableException(String message, @Nullable Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Starts the guard and waits until it has connected. It starts the command only when told to
     * by {@link #begin}.
     *
     * @param command the command and its arguments
     * @param environment the command's environment changes: a null value removes the variable
     * @param grace time between SIGTERM and SIGKILL
     * @throws UnavailableException if perl cannot be run or the guard does not connect
     */
    static Guard start(List<String> command, Map<String, String> environment, Duration grace)
            throws UnavailableException {
        Path dir;
        try {
            dir = Files.createTempDirectory("turnstile-guard"); // owner-only: nobody else can connect
        } catch (IOException e) {
            throw new UnavailableException("cannot create a directory for the guard's socket: " + e.getMessage(), e);
        }
        Path socket = dir.resolve("s");
        Process process = null;
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            List<String> argv = new ArrayList<>(List.of("perl", "-e", SCRIPT, socket.toString(),
                    Long.toString(grace.toMillis()), "--"));
            argv.addAll(command);
            ProcessBuilder pb = new ProcessBuilder(argv).inheritIO();
            if (!pb.environment().containsKey("PERL_BADLANG") && !environment.containsKey("PERL_BADLANG")) {
                // perl warns about a locale that is not installed; the guard uses none. The command
                // does not get the variable (guard.pl removes it).
                pb.environment().put("PERL_BADLANG", "0");
                pb.environment().put("TURNSTILE_GUARD_UNSET", "PERL_BADLANG");
            }
            environment.forEach((k, v) -> {
                if (v == null) {
                    pb.environment().remove(k);
                } else {
                    pb.environment().put(k, v);
                }
            });
            long before = System.nanoTime();
            try {
                process = pb.start();
            } catch (IOException e) {
                throw new UnavailableException("cannot start the guard that stops the command if turnstile dies or "
                        + "freezes: perl is needed (Debian/Ubuntu: perl-base; RHEL: perl-interpreter)", e);
            }
            long connectBy = System.nanoTime() + CONNECT_TIMEOUT.toNanos();
            SocketChannel channel = accept(server, process, connectBy);
            Guard guard = new Guard(process, channel);
            guard.greet(before, connectBy);
            return guard;
        } catch (IOException e) {
            if (process != null) {
                process.destroyForcibly();
            }
            throw new UnavailableException("cannot set up the guard's socket: " + e.getMessage(), e);
        } catch (UnavailableException e) {
            if (process != null) {
                process.destroyForcibly();
            }
            throw e;
        } finally {
            try {
                Files.deleteIfExists(socket);
                Files.deleteIfExists(dir);
            } catch (IOException ignored) {
                // a leftover empty directory in the temporary folder
            }
        }
    }

    /**
     * Reads the guard's hello: its CLOCK_MONOTONIC reading must lie between this JVM's nanoTime
     * before the guard started and after the hello came for deadlines to be sent as absolute times
     * (1 ms of slack for the guard's float arithmetic).
     */
    private void greet(long before, long connectBy) throws UnavailableException {
        String line;
        try {
            line = hello.get(Math.max(1, connectBy - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
            throw new UnavailableException("the guard did not say hello within " + CONNECT_TIMEOUT.toSeconds() + " s", null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UnavailableException("interrupted while the guard started", e);
        }
        @SuppressWarnings("StringSplitter") // a trailing space makes no fourth part, so the line still reads as three
        String[] parts = line.split(" ");
        if (parts.length == 3 && !parts[1].equals("none")) {
            try {
                long clock = Long.parseLong(parts[1]);
                long slack = TimeUnit.MILLISECONDS.toNanos(1);
                absolute = clock - (before - slack) >= 0 && (helloReceivedAt + slack) - clock >= 0;
            } catch (NumberFormatException e) {
                absolute = false;
            }
        }
        subreaper = parts.length == 3 && parts[2].equals("1");
        LOG.debug("guard pid {}: deadlines {}, {}", process.pid(),
                absolute ? "absolute (CLOCK_MONOTONIC shared with this JVM)" : "relative (no clock shared with this JVM)",
                subreaper ? "child subreaper (tracks every descendant)" : "no subreaper (tracks the command's group)");
    }

    /** Whether deadlines go to the guard as absolute monotonic times (else relative). */
    boolean absoluteDeadlines() {
        return absolute;
    }

    /** Whether the guard is a child subreaper, and so keeps track of every descendant. */
    boolean subreaper() {
        return subreaper;
    }

    private static SocketChannel accept(ServerSocketChannel server, Process process, long deadline)
            throws IOException, UnavailableException {
        server.configureBlocking(false);
        try (Selector selector = Selector.open()) {
            server.register(selector, SelectionKey.OP_ACCEPT);
            while (true) {
                SocketChannel channel = server.accept();
                if (channel != null) {
                    channel.configureBlocking(true);
                    return channel;
                }
                if (!process.isAlive()) {
                    throw new UnavailableException("the guard exited before it connected (exit "
                            + process.exitValue() + ")", null);
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new UnavailableException("the guard did not connect within " + CONNECT_TIMEOUT.toSeconds() + " s",
                            null);
                }
                selector.select(20);
                selector.selectedKeys().clear();
            }
        }
    }

    /** Whether the guard still runs (and so the command may). */
    boolean isRunning() {
        return process.isAlive();
    }

    /** Whether the guard was told to start the command. */
    boolean started() {
        return started;
    }

    /**
     * Tells the guard to start the command, with the lease's deadline. The guard refuses if the
     * deadline leaves no more than the grace period by the time it reads it.
     *
     * @param deadline the lease's deadline, a {@code System.nanoTime()} value
     */
    void begin(long deadline) {
        started = true;
        send("start " + deadlineWords(deadline));
    }

    /** Tells the guard the lease is known held until {@code deadline} (a {@code System.nanoTime()} value). */
    void deadline(long deadline) {
        send("deadline " + deadlineWords(deadline));
    }

    private String deadlineWords(long deadline) {
        if (absolute) {
            return "at " + deadline;
        }
        return "in " + Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
    }

    /**
     * Stops the command's tree: {@code signal} now, SIGKILL after the grace period or at the
     * deadline. If the guard does not answer within {@link #STOP_ACK_TIMEOUT},
     * this JVM kills the tree and the guard.
     *
     * @return false if the guard did not answer and this JVM killed everything itself
     */
    boolean stop(String signal) {
        return sendAndAwait("stop " + signal, STOP_ACK_TIMEOUT);
    }

    /**
     * SIGKILLs the command's tree now: the lease is gone. If the guard does not answer in time,
     * this JVM kills the tree and the guard.
     *
     * @return false if the guard did not answer and this JVM killed everything itself
     */
    boolean kill() {
        return sendAndAwait("kill", ACK_TIMEOUT);
    }

    /** Passes a signal on to the command (its process alone). */
    void signal(String signal) {
        send("signal " + signal);
    }

    /** How long the oldest message the guard has not answered has waited; zero if none. */
    Duration unansweredFor() {
        synchronized (unanswered) {
            Long oldest = unanswered.peekFirst();
            return oldest == null ? Duration.ZERO : Duration.ofNanos(System.nanoTime() - oldest);
        }
    }

    /** Whether this JVM killed the command's tree and the guard because the guard did not answer. */
    boolean killedByJvm() {
        return killedByJvm.get();
    }

    private boolean sendAndAwait(String line, Duration timeout) {
        if (!process.isAlive()) {
            return true; // waitFor() kills what a dead guard left
        }
        long number = send(line);
        long until = System.nanoTime() + timeout.toNanos();
        synchronized (unanswered) {
            while (answered < number) {
                long left = until - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(unanswered, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            if (answered >= number) {
                return true;
            }
        }
        if (!process.isAlive()) {
            return true;
        }
        killEverything();
        return false;
    }

    /** Sends a line; returns its number, which the guard's answer to it will carry. */
    private long send(String line) {
        long number;
        synchronized (writing) {
            synchronized (unanswered) {
                number = ++sent;
                unanswered.addLast(System.nanoTime());
            }
            try {
                ByteBuffer buffer = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.US_ASCII));
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
            } catch (IOException e) {
                // The guard is gone; waitFor() tells what that means for the command.
            }
        }
        return number;
    }

    private void readReports() {
        try (InputStream in = Channels.newInputStream(channel)) {
            StringBuilder line = new StringBuilder();
            int b;
            while ((b = in.read()) >= 0) {
                if (b != '\n') {
                    line.append((char) b);
                    continue;
                }
                String report = line.toString();
                line.setLength(0);
                if (report.equals("ack")) {
                    synchronized (unanswered) {
                        answered++;
                        unanswered.pollFirst();
                        unanswered.notifyAll();
                    }
                } else if (report.startsWith("hello ")) {
                    helloReceivedAt = System.nanoTime();
                    hello.complete(report);
                } else if (report.startsWith("pid ")) {
                    commandPid = Long.parseLong(report.substring(4));
                } else if (report.startsWith("refused ")) {
                    refusal = report.substring(8);
                } else if (report.startsWith("exit ")) {
                    reportedExit = Integer.parseInt(report.substring(5));
                }
            }
        } catch (IOException | RuntimeException e) {
            // The guard closed the socket; its exit tells the rest.
        } finally {
            hello.completeExceptionally(new IOException("the guard closed the connection"));
        }
    }

    /** Why the guard did not start the command, or null. */
    @Nullable String refusal() {
        return refusal;
    }

    /**
     * Waits for the command (and what it started) to end.
     *
     * @return the command's exit code (128 + N if signal N ended it), 126/127 if it could not be
     *     started; {@link #NOT_STARTED} if the guard did not start it; or {@link #GUARD_GONE} if
     *     the guard itself died or was killed, in which case this JVM has killed the command
     */
    int waitFor() throws InterruptedException {
        process.waitFor();
        reader.join(TimeUnit.SECONDS.toMillis(2));
        if (refusal != null) {
            return NOT_STARTED;
        }
        Integer code = reportedExit;
        if (code != null) {
            return code;
        }
        killEverything();
        return GUARD_GONE;
    }

    /**
     * Tells a guard that has not started the command not to, and waits for it to end; kills it if
     * it does not answer.
     */
    void cancel() throws InterruptedException {
        if (kill() && !process.waitFor(ACK_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            killEverything();
        }
        process.waitFor();
    }

    /**
     * Kills, with SIGKILL, the command's group, every descendant of the guard process (the orphans
     * it has taken in as a subreaper too), and then the guard; and once more what was found, which
     * the guard's death hands on to another parent. Three passes catch what forked meanwhile.
     */
    void killEverything() {
        Set<ProcessHandle> seen = new LinkedHashSet<>();
        for (int pass = 0; pass < 3; pass++) {
            long pid = commandPid;
            if (pid > 0) {
                killGroup(pid);
            }
            process.descendants().forEach(h -> {
                seen.add(h);
                h.destroyForcibly();
            });
            if (pid > 0) {
                ProcessHandle.of(pid).ifPresent(h -> {
                    seen.add(h);
                    h.descendants().forEach(d -> {
                        seen.add(d);
                        d.destroyForcibly();
                    });
                });
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (process.isAlive()) {
            killedByJvm.set(true);
            process.destroyForcibly();
        }
        seen.forEach(ProcessHandle::destroyForcibly);
    }

    private static void killGroup(long pgid) {
        try {
            new ProcessBuilder("kill", "-s", "KILL", "--", "-" + pgid).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(5, TimeUnit.SECONDS);
        } catch (IOException e) {
            // the group is gone or kill(1) is missing; the descendants are killed one by one
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String loadScript() {
        try (InputStream in = Guard.class.getResourceAsStream("guard.pl")) {
            if (in == null) {
                throw new IllegalStateException("guard.pl is missing from the turnstile jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
