package dev.turnstile.cli;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Runs the CLI in this JVM or in a child JVM, with its state directory in a temporary folder. */
final class Cli {
    final Path stateHome;

    Cli(Path stateHome) {
        this.stateHome = stateHome;
    }

    record Result(int code, String out, String err) {
        String all() {
            return out + err;
        }
    }

    Map<String, String> env() {
        Map<String, String> env = new HashMap<>();
        env.put("XDG_STATE_HOME", stateHome.toString());
        env.put("HOME", stateHome.toString());
        return env;
    }

    Path embeddedDb() {
        return stateHome.resolve("turnstile").resolve("locks.db");
    }

    String embeddedUrl() {
        return "jdbc:sqlite:" + embeddedDb();
    }

    Result run(String... args) {
        return run(Map.of(), args);
    }

    /** Runs in this JVM with extra environment variables. */
    Result run(Map<String, String> extraEnv, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Map<String, String> env = env();
        env.putAll(extraEnv);
        int code = TurnstileCommand.execute(env, new PrintWriter(out), new PrintWriter(err), args);
        return new Result(code, out.toString(), err.toString());
    }

    /**
     * The CLI's classes and its runtime dependencies, as its jar holds them ({@code
     * target/runtime-classpath.txt}, written by the build), never the test classpath: a dependency
     * the tests have and the jar lacks must fail here.
     */
    static String runtimeClasspath() {
        Path file = Path.of("target", "runtime-classpath.txt");
        if (!Files.isRegularFile(file)) {
            throw new IllegalStateException(file.toAbsolutePath() + " is missing: run the tests through Maven, whose "
                    + "generate-test-resources phase writes it");
        }
        try {
            return Path.of("target", "classes").toAbsolutePath() + File.pathSeparator + Files.readString(file).strip();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts the CLI as its own JVM (what cron runs, with bin/turnstile's flags), output to files in the state directory. */
    Process spawn(Map<String, String> extraEnv, String... args) throws IOException {
        return spawn(List.of(), extraEnv, args);
    }

    /** As {@link #spawn(Map, String...)}, with extra JVM options. */
    Process spawn(List<String> jvmOptions, Map<String, String> extraEnv, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:+UnlockDiagnosticVMOptions", "-XX:-DisplayVMOutput"));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-cp", runtimeClasspath(), TurnstileCommand.class.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(env());
        pb.environment().remove("TURNSTILE_STORE");
        pb.environment().putAll(extraEnv);
        pb.redirectErrorStream(true);
        pb.redirectOutput(ProcessBuilder.Redirect.appendTo(stateHome.resolve("spawned.log").toFile()));
        return pb.start();
    }
}
