package dev.turnstile.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/** Small process and time helpers shared by the harness. */
final class Harness {
    private Harness() {}

    private static final String SETSID = Files.isExecutable(Path.of("/usr/bin/setsid")) ? "/usr/bin/setsid" : null;
    private static final Set<Process> STARTED = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> STARTED.forEach(p -> {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }), "chaos-process-cleanup"));
    }

    /**
     * Starts a process the harness may SIGSTOP (a worker, a server, a {@code turnstile run}) in a
     * session of its own. In the harness's process group, a stopped process would be sent SIGCONT
     * (and SIGHUP) by the kernel when that group is orphaned, as when the shell that started the run
     * in the background exits; a long run launched so once saw a "paused" holder run on. Such a
     * process no longer dies with the terminal's Ctrl-C, so every one still running when the
     * harness's JVM exits is killed then, with what it started.
     */
    static Process startInOwnSession(ProcessBuilder pb) throws IOException {
        if (SETSID != null) {
            // setsid execs in place (the JVM's children lead no process group): the pid is the process's.
            List<String> command = new ArrayList<>(pb.command());
            command.add(0, SETSID);
            pb.command(command);
        }
        Process p = pb.start();
        STARTED.add(p);
        p.onExit().thenRun(() -> STARTED.remove(p));
        return p;
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Sends a signal ({@code STOP}, {@code CONT}, {@code KILL}) to a process. */
    static void signal(long pid, String signal) {
        exec(List.of("kill", "-" + signal, Long.toString(pid)), 10);
    }

    /** Runs a command, returns its output; throws with the output if it fails. */
    static String exec(List<String> cmd, int timeoutSeconds) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", cmd) + " did not finish in " + timeoutSeconds + " s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", cmd) + " failed (exit " + p.exitValue() + "): " + out.trim());
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + String.join(" ", cmd) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
