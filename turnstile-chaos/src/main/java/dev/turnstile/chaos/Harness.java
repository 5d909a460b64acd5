package dev.turnstile.chaos;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Small process and time helpers shared by the harness. */
final class Harness {
    private Harness() {}

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
