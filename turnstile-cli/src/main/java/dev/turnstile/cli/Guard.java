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
import java.util.concurrent.TimeUnit;

/**
 * The JVM's side of the guard: a small process of its own ({@code guard.pl}, perl-base only) that
 * starts the command in a process group of its own and stops that group when the lease runs out,
 * whether or not this JVM still runs. This JVM tells it, over a Unix socket, how long the lease is
 * still known to be held; if those messages stop (the JVM is frozen) the guard stops the command by
 * the last deadline it was given, and if the socket closes (the JVM died) it stops it at once.
 *
 * <p>The guard is the command's parent: its exit code is the command's (128 + N for signal N).
 */
final class Guard {
    private static final String SCRIPT = loadScript();
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

    private final Process process;
    private final SocketChannel channel;
    private final Thread reader;
    private volatile long commandPid = -1;
    private volatile Integer reportedExit;

    private Guard(Process process, SocketChannel channel) {
        this.process = process;
        this.channel = channel;
        this.reader = new Thread(this::readReports, "turnstile-guard-reader");
        this.reader.setDaemon(true);
        this.reader.start();
    }

    /** The guard could not be started or did not come up; the command was not started. */
    static final class UnavailableException extends Exception {
        UnavailableException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Starts the guard, which starts the command once it has the lease's first deadline.
     *
     * @param command the command and its arguments
     * @param environment the command's environment changes: a null value removes the variable
     * @param grace time between SIGTERM and SIGKILL
     * @param timeLeft how long the lease is known to be held from now
     * @throws UnavailableException if perl cannot be run or the guard does not connect
     */
    static Guard start(List<String> command, Map<String, String> environment, Duration grace, Duration timeLeft)
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
            try {
                process = pb.start();
            } catch (IOException e) {
                throw new UnavailableException("cannot start the guard that stops the command if turnstile dies or "
                        + "freezes: perl is needed (Debian/Ubuntu: perl-base; RHEL: perl-interpreter)", e);
            }
            SocketChannel channel = accept(server, process);
            Guard guard = new Guard(process, channel);
            guard.deadline(timeLeft);
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

    private static SocketChannel accept(ServerSocketChannel server, Process process)
            throws IOException, UnavailableException {
        server.configureBlocking(false);
        long deadline = System.nanoTime() + CONNECT_TIMEOUT.toNanos();
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

    /** Tells the guard the lease is known held for {@code left} from now. */
    void deadline(Duration left) {
        send("deadline " + Math.max(0, left.toMillis()));
    }

    /** Stops the command's tree: {@code signal} now, SIGKILL after the grace period or at the deadline. */
    void stop(String signal) {
        send("stop " + signal);
    }

    /** SIGKILLs the command's tree now: the lease is gone. */
    void kill() {
        send("kill");
    }

    /** Passes a signal on to the command (its process alone). */
    void signal(String signal) {
        send("signal " + signal);
    }

    private synchronized void send(String line) {
        try {
            ByteBuffer buffer = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.US_ASCII));
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
        } catch (IOException e) {
            // The guard is gone; waitFor() tells what that means for the command.
        }
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
                if (report.startsWith("pid ")) {
                    commandPid = Long.parseLong(report.substring(4));
                } else if (report.startsWith("exit ")) {
                    reportedExit = Integer.parseInt(report.substring(5));
                }
            }
        } catch (IOException | RuntimeException e) {
            // The guard closed the socket; its exit tells the rest.
        }
    }

    /**
     * Waits for the command (and what it started) to end.
     *
     * @return the command's exit code (128 + N if signal N ended it), 126/127 if it could not be
     *     started; or -1 if the guard itself died, in which case this JVM has killed the command
     */
    int waitFor() throws InterruptedException {
        process.waitFor();
        reader.join(TimeUnit.SECONDS.toMillis(2));
        Integer code = reportedExit;
        if (code != null) {
            return code;
        }
        killCommandTree();
        return -1;
    }

    /** The guard died under the command: this JVM still can, and does, kill what it left. */
    private void killCommandTree() {
        long pid = commandPid;
        if (pid <= 0) {
            return;
        }
        ProcessHandle.of(pid).ifPresent(h -> {
            h.descendants().forEach(ProcessHandle::destroyForcibly);
            h.destroyForcibly();
        });
        try {
            new ProcessBuilder("kill", "-s", "KILL", "--", "-" + pid).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(5, TimeUnit.SECONDS);
        } catch (IOException e) {
            // the group is gone or kill(1) is missing; the descendants were killed above
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
