package dev.turnstile.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Fault runs where the holders are {@code turnstile run} processes, as cron starts them: a few
 * "hosts" each start {@code turnstile run --lock L --ttl 3s --grace 1s --wait 20s -- CMD} again as
 * soon as the last one exits, and CMD (which ignores SIGTERM, the hardest case) appends a line to
 * one log every 25 ms for much longer than the TTL (400 lines, about 12 s); each fault hits a
 * command that has just begun, so that it has the whole of its run to show what the fault does. The harness hits the run whose command wrote last with a
 * fault, and {@link CommandLogChecker} counts the runs whose commands were alive at once.
 *
 * <pre>
 * CliChaos [--faults kill-cli,stop-cli,kill-command,partition-cli,freeze-both] [--rounds N]
 *          [--out FILE.md] [--work-dir DIR] [--command TEXT]
 * </pre>
 *
 * <p>Faults: {@code kill-cli} SIGKILLs the turnstile JVM; {@code stop-cli} SIGSTOPs it for the TTL
 * plus 2 s; {@code kill-command} SIGKILLs the command; {@code partition-cli} cuts the JVM off from
 * the store (PostgreSQL through a proxy) for the TTL plus 2 s; {@code freeze-both} SIGSTOPs the
 * JVM and its guard together — the one case nothing on the host can handle, where overlaps are
 * expected and the fence is what protects the resource. The other stores run on the embedded
 * SQLite file, as {@code turnstile run} does by default. Exit code 0 when every scenario meets its
 * expectation. The table goes into {@code --out} between the markers of {@link MarkedSection#CLI}, so
 * that it can be docs/reliability.md itself.
 */
public final class CliChaos {
    /** The faults, in the order they run. */
    public static final List<String> FAULTS = List.of("kill-cli", "stop-cli", "kill-command", "partition-cli", "freeze-both");
    static final Duration TTL = Duration.ofSeconds(3);
    static final Duration GRACE = Duration.ofSeconds(1);
    private static final int HOSTS = 3;
    private static final String POSTGRES_HOST = "127.0.0.1";
    private static final int POSTGRES_PORT = 5432;

    private CliChaos() {}

    /** One scenario's outcome. */
    record Result(String fault, int rounds, int injected, CommandLogChecker.Result log, Map<Integer, Integer> exits,
            long worstStopMillis, String dir) {
        boolean expectsOverlap() {
            return fault.equals("freeze-both");
        }

        boolean passed() {
            boolean progressed = log.runs().size() > rounds && injected == rounds;
            return progressed && log.malformed() == 0 && log.fenceDisorder().isEmpty()
                    && (expectsOverlap() || log.overlaps().isEmpty());
        }
    }

    /**
     * Runs the chosen scenarios and writes their table.
     *
     * @param args see the class comment
     */
    public static void main(String[] args) throws Exception {
        List<String> faults = FAULTS;
        int rounds = 3;
        String command = "turnstile-chaos/run.sh --cli";
        Path out = Path.of("turnstile-chaos/target/cli-chaos.md");
        Path work = Path.of("turnstile-chaos/target/cli-chaos");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--faults" -> faults = List.of(args[++i].split(","));
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                case "--work-dir" -> work = Path.of(args[++i]);
                case "--command" -> command = args[++i];
                default -> {
                    System.err.println("CliChaos: unknown option '" + args[i] + "'");
                    System.exit(2);
                }
            }
        }
        List<Result> results = new ArrayList<>();
        for (String fault : faults) {
            Result r = run(fault, rounds, work);
            results.add(r);
            System.out.println(line(r));
        }
        Files.createDirectories(out.toAbsolutePath().getParent());
        MarkedSection.CLI.write(out, section(results, command));
        System.exit(results.stream().allMatch(Result::passed) ? 0 : 1);
    }

    static String line(Result r) {
        return String.format("%s: %s (%d rounds, %d commands, %d overlapping pairs, %d stale-fence lines, exits %s, "
                + "worst stop %d ms)%s", r.fault(), r.passed() ? "PASS" : "FAIL", r.rounds(), r.log().runs().size(),
                r.log().overlaps().size(), r.log().staleLines(), r.exits(), r.worstStopMillis(),
                r.log().overlaps().isEmpty() ? "" : " " + r.log().overlaps());
    }

    /** The CLI section of docs/reliability.md. */
    static String section(List<Result> results, String command) {
        long passed = results.stream().filter(Result::passed).count();
        return "## `turnstile run` under faults\n\n"
                + "Generated " + java.time.OffsetDateTime.now(java.time.ZoneOffset.UTC).truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
                + ": the holders are `turnstile run` processes started again by 3 \"hosts\" as soon as they exit, as cron "
                + "would; each command ignores SIGTERM and appends a line (run, fence, time) to one log every 25 ms, 400 "
                + "times (about 12 s, much longer than the TTL). Two commands *overlap* when their lines interleave in that log (appends are ordered by the "
                + "kernel, so no clock is involved). **" + passed + " of " + results.size() + " scenarios meet their "
                + "expectation.** Faults hit a run whose command has just begun: `kill-cli` SIGKILLs its JVM, `stop-cli` "
                + "SIGSTOPs it for the TTL + 2 s, `kill-command` SIGKILLs the command, `partition-cli` cuts the JVM off "
                + "from PostgreSQL (proxy blackhole) for the TTL + 2 s, `freeze-both` SIGSTOPs the JVM and its guard "
                + "together. The others run on the embedded SQLite store. Exit codes: 70 lease lost (the command was "
                + "stopped), 137 SIGKILLed turnstile or command, 75 and 143 runners whose `--wait` ran out or that were "
                + "still waiting when the scenario ended.\n\n"
                + table(results, command)
                + "\nWith the JVM and its guard frozen together nothing on the host can stop the command: the next "
                + "runner starts after the TTL and the two overlap until the guard runs again and kills the old one at "
                + "once (its deadline has passed). That is what `TURNSTILE_FENCE` is for: the stale-fence lines are the "
                + "writes a resource that checks fences rejects. Every other row must show 0 overlapping commands.\n\n";
    }

    /** The Markdown table of a run. */
    static String table(List<Result> results, String command) {
        StringBuilder b = new StringBuilder();
        b.append("Reproduce with `").append(command).append("` (TTL ").append(TTL.toSeconds()).append(" s, --grace ")
                .append(GRACE.toSeconds()).append(" s, ").append(HOSTS).append(" hosts, commands that ignore SIGTERM).\n\n");
        b.append("| fault | rounds | commands run | overlapping commands | stale-fence lines | fence order | exit codes | "
                + "faulted command's last line after the fault | verdict |\n");
        b.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
        for (Result r : results) {
            b.append("| ").append(r.fault()).append(" | ").append(r.rounds()).append(" | ").append(r.log().runs().size())
                    .append(" | ").append(r.log().overlaps().size()).append(" | ").append(r.log().staleLines())
                    .append(" | ").append(r.log().fenceDisorder().isEmpty() ? "increasing" : r.log().fenceDisorder())
                    .append(" | ").append(r.exits().entrySet().stream().map(e -> e.getKey() + "×" + e.getValue())
                            .collect(Collectors.joining(", ")))
                    .append(" | ").append(r.worstStopMillis() < 0 ? "—" : "≤ " + r.worstStopMillis() + " ms")
                    .append(" | ").append(r.passed() ? (r.expectsOverlap() ? "as documented: overlaps expected" : "pass") : "FAIL")
                    .append(" |\n");
        }
        return b.toString();
    }

    /**
     * Runs one scenario.
     *
     * @param fault one of {@link #FAULTS}
     * @param rounds how many times to inject it
     * @param work the parent of the scenario's directory
     * @return what happened
     */
    static Result run(String fault, int rounds, Path work) throws Exception {
        if (!FAULTS.contains(fault)) {
            throw new IllegalArgumentException("unknown CLI fault '" + fault + "': use one of " + FAULTS);
        }
        Path dir = Files.createDirectories(work.toAbsolutePath().resolve(fault + "-" + System.currentTimeMillis()));
        Path log = dir.resolve("commands.log");
        Files.createFile(log);
        boolean viaProxy = fault.equals("partition-cli");
        String lock = "cli-chaos-" + dir.getFileName();
        List<Host> hosts = new ArrayList<>();
        List<Long> stopMillis = new ArrayList<>();
        int injected = 0;
        try {
            for (int h = 0; h < HOSTS; h++) {
                hosts.add(new Host(h, dir, log, lock, viaProxy));
            }
            hosts.forEach(Host::start);
            Harness.sleep(3000);
            for (int round = 0; round < rounds; round++) {
                Harness.sleep(1500);
                Optional<Host.Running> holder = holder(hosts, log);
                for (int tries = 0; holder.isEmpty() && tries < 400; tries++) {
                    Harness.sleep(50);
                    holder = holder(hosts, log);
                }
                if (holder.isEmpty()) {
                    continue;
                }
                long faultAt = System.currentTimeMillis();
                inject(fault, holder.get());
                injected++;
                Harness.sleep(TTL.toMillis() + 4000);
                lastLineOf(log, holder.get().run()).ifPresent(last -> stopMillis.add(last - faultAt));
            }
        } finally {
            Files.writeString(dir.resolve("STOP"), "");
            hosts.forEach(Host::stop);
        }
        Map<Integer, Integer> exits = new TreeMap<>();
        hosts.forEach(h -> h.exits.forEach((code, n) -> exits.merge(code, n, Integer::sum)));
        CommandLogChecker.Result checked = CommandLogChecker.check(Files.readAllLines(log));
        long worst = fault.equals("freeze-both") ? -1 : stopMillis.stream().mapToLong(Long::longValue).max().orElse(-1);
        return new Result(fault, rounds, injected, checked, exits, worst, dir.toString());
    }

    private static void inject(String fault, Host.Running holder) {
        ProcessHandle jvm = holder.process().toHandle();
        Optional<ProcessHandle> guard = jvm.children().findFirst();
        switch (fault) {
            case "kill-cli" -> Harness.signal(jvm.pid(), "KILL");
            case "stop-cli" -> {
                Harness.signal(jvm.pid(), "STOP");
                Harness.sleep(TTL.toMillis() + 2000);
                Harness.signal(jvm.pid(), "CONT");
            }
            case "kill-command" -> guard.flatMap(g -> g.children().findFirst())
                    .ifPresent(command -> Harness.signal(command.pid(), "KILL"));
            case "partition-cli" -> {
                holder.proxy().blackhole();
                Harness.sleep(TTL.toMillis() + 2000);
                holder.proxy().heal();
            }
            case "freeze-both" -> {
                Harness.signal(jvm.pid(), "STOP");
                guard.ifPresent(g -> Harness.signal(g.pid(), "STOP"));
                Harness.sleep(TTL.toMillis() + 2000);
                guard.ifPresent(g -> Harness.signal(g.pid(), "CONT"));
                Harness.signal(jvm.pid(), "CONT");
            }
            default -> throw new IllegalArgumentException(fault);
        }
    }

    /**
     * The run whose command wrote the log's last line, if that command has only just begun: a
     * fault then has the whole of its run, longer than the TTL, to show what it does.
     */
    private static Optional<Host.Running> holder(List<Host> hosts, Path log) throws IOException {
        List<String> lines = Files.readAllLines(log);
        if (lines.isEmpty()) {
            return Optional.empty();
        }
        String[] last = lines.get(lines.size() - 1).split(" ");
        if (last.length != 4 || last[3].equals("end") || Integer.parseInt(last[3]) > 10) {
            return Optional.empty();
        }
        String run = last[0];
        return hosts.stream().map(h -> h.current).filter(r -> r != null && r.run().equals(run) && r.process().isAlive())
                .findFirst();
    }

    /** Wall-clock millis of a run's last line. */
    private static Optional<Long> lastLineOf(Path log, String run) throws IOException {
        return Files.readAllLines(log).stream().map(l -> l.split(" ")).filter(f -> f.length == 4 && f[0].equals(run))
                .map(f -> Long.parseLong(f[2]) / 1_000_000).max(Comparator.naturalOrder());
    }

    /** One machine's cron: starts the next {@code turnstile run} as soon as the last has exited. */
    private static final class Host {
        record Running(String run, Process process, TcpProxy proxy) {}

        private final int id;
        private final Path dir;
        private final Path log;
        private final String lock;
        private final boolean viaProxy;
        private final Thread loop;
        private final Map<Integer, Integer> exits = new ConcurrentHashMap<>();
        private volatile boolean stopping;
        private volatile Running current;

        Host(int id, Path dir, Path log, String lock, boolean viaProxy) {
            this.id = id;
            this.dir = dir;
            this.log = log;
            this.lock = lock;
            this.viaProxy = viaProxy;
            this.loop = new Thread(this::loop, "cli-host-" + id);
        }

        void start() {
            loop.start();
        }

        void stop() {
            stopping = true;
            try {
                loop.join(60_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Running r = current;
            if (r != null) {
                r.process().descendants().forEach(ProcessHandle::destroyForcibly);
                r.process().destroyForcibly();
            }
        }

        private void loop() {
            for (int n = 0; !stopping; n++) {
                String run = "h" + id + "-" + n;
                TcpProxy proxy = viaProxy ? new TcpProxy(POSTGRES_HOST, POSTGRES_PORT) : null;
                try {
                    Process p = spawn(run, proxy);
                    current = new Running(run, p, proxy);
                    while (!p.waitFor(100, TimeUnit.MILLISECONDS)) {
                        if (stopping && !p.toHandle().children().findAny().isPresent()) {
                            p.destroy(); // still waiting for the lock: no command to wait for
                        }
                    }
                    exits.merge(p.exitValue(), 1, Integer::sum);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } catch (InterruptedException e) {
                    return;
                } finally {
                    if (proxy != null) {
                        proxy.close();
                    }
                }
            }
        }

        private Process spawn(String run, TcpProxy proxy) throws IOException {
            String store = proxy == null ? "jdbc:sqlite:" + dir.resolve("locks.db")
                    : "jdbc:postgresql://" + proxy.hostPort() + "/test?user=postgres&turnstile.createTable=true";
            String command = "trap '' TERM; i=0; while [ $i -lt 400 ] && [ ! -e '" + dir.resolve("STOP") + "' ]; do echo \"$RUN $TURNSTILE_FENCE $(date +%s%N) $i\" >> '"
                    + log + "'; i=$((i+1)); sleep 0.025; done; echo \"$RUN $TURNSTILE_FENCE $(date +%s%N) end\" >> '" + log + "'";
            List<String> argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:+UnlockDiagnosticVMOptions", "-XX:-DisplayVMOutput",
                    "-cp", Cluster.workerClassPath(dir.getParent()), "dev.turnstile.cli.TurnstileCommand",
                    "run", "--store", store, "--lock", lock, "--ttl", TTL.toSeconds() + "s", "--grace", GRACE.toSeconds() + "s",
                    "--wait", "20s", "--", "sh", "-c", command));
            ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("host-" + id + ".log").toFile()));
            pb.environment().put("RUN", run);
            pb.environment().put("XDG_STATE_HOME", dir.toString());
            pb.environment().remove("TURNSTILE_STORE");
            return Harness.startInOwnSession(pb);
        }
    }
}
