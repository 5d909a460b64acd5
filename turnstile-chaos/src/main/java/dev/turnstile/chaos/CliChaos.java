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
 * "hosts" each start {@code turnstile run --lock L --ttl 3s --grace 1s --wait 40s -- CMD} again as
 * soon as the last one exits, and CMD (which ignores SIGTERM, the hardest case) appends a line to
 * one log every 25 ms for much longer than the TTL (400 lines, about 12 s); each fault hits a
 * command that has just begun, so that it has the whole of its run to show what the fault does. The harness hits the run whose command wrote last with a
 * fault, and {@link CommandLogChecker} counts the runs whose commands were alive at once.
 *
 * <pre>
 * CliChaos [--stores sqlite,postgresql,mariadb,redis,redlock,mongo,zookeeper]
 *          [--faults kill-cli,stop-cli,kill-command,partition-cli,freeze-both] [--rounds N]
 *          [--out FILE.md] [--work-dir DIR] [--command TEXT]
 * </pre>
 *
 * <p>Faults: {@code kill-cli} SIGKILLs the turnstile JVM; {@code stop-cli} SIGSTOPs it for the TTL
 * plus 2 s; {@code kill-command} SIGKILLs the command; {@code partition-cli} cuts the JVM off from
 * the store (every endpoint through a proxy that holds bytes) for the TTL plus 2 s; {@code
 * freeze-both} SIGSTOPs the JVM and its guard together — the one case nothing on the host can
 * handle, where overlaps are expected and the fence is what protects the resource. The JVM faults
 * run on every store named (a session-bound store, ZooKeeper, ends a lease when the session
 * expires, which a frozen or dead JVM never sees: its cells check that the guard's deadline is
 * bounded by the session too); {@code partition-cli} on every networked store; {@code kill-command}
 * and {@code freeze-both}, which do not depend on the store, on the first store named. Each store
 * runs as the chaos matrix runs it ({@link StoreInstance}: the harness's own Redis, ZooKeeper and
 * MongoDB processes). Exit code 0 when every scenario meets its expectation. The table goes into
 * {@code --out} between the markers of {@link MarkedSection#CLI}, so that it can be
 * docs/reliability.md itself.
 *
 * <p>A test harness, not published: past 400 lines as the one list of the CLI's chaos cells.
 */
public final class CliChaos {
    /** The faults, in the order they run. */
    public static final List<String> FAULTS = List.of("kill-cli", "stop-cli", "kill-command", "partition-cli", "freeze-both");
    static final Duration TTL = Duration.ofSeconds(3);
    static final Duration GRACE = Duration.ofSeconds(1);
    /**
     * ZooKeeper: a session shorter than the TTL, so that the session, not the TTL, bounds the lease
     * and what a frozen or killed JVM leaves running is what the session bound must stop.
     */
    static final Duration ZK_SESSION = Duration.ofSeconds(2);
    /** ZooKeeper: the grace must fit in half the session bound (session less its margin). */
    static final Duration ZK_GRACE = Duration.ofMillis(500);
    /** The stores every CLI fault runs on by default, in report order. */
    public static final List<String> STORES = List.of("sqlite", "postgresql", "mariadb", "redis", "redlock", "mongo", "zookeeper");
    private static final List<String> STORE_INDEPENDENT = List.of("kill-command", "freeze-both");
    private static final int HOSTS = 3;

    /** One cell of the matrix. */
    record Cell(String store, String fault) {}

    /**
     * The cells for these stores and faults: the JVM faults on every store, {@code partition-cli}
     * on the networked ones, the store-independent faults on the first store only.
     */
    static List<Cell> cells(List<String> stores, List<String> faults) {
        List<Cell> cells = new ArrayList<>();
        for (String store : stores) {
            for (String fault : faults) {
                if (!FAULTS.contains(fault)) {
                    throw new IllegalArgumentException("unknown CLI fault '" + fault + "': use one of " + FAULTS);
                }
                boolean applies = fault.equals("partition-cli") ? !store.equals("sqlite")
                        : !STORE_INDEPENDENT.contains(fault) || store.equals(stores.get(0));
                if (applies) {
                    cells.add(new Cell(StoreSpec.named(store).name(), fault));
                }
            }
        }
        return cells;
    }

    private CliChaos() {}

    /** One scenario's outcome. */
    record Result(String store, String fault, int rounds, int injected, CommandLogChecker.Result log, Map<Integer, Integer> exits,
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
        List<String> stores = STORES;
        int rounds = 3;
        String command = "turnstile-chaos/run.sh --cli";
        Path out = Path.of("turnstile-chaos/target/cli-chaos.md");
        Path work = Path.of("turnstile-chaos/target/cli-chaos");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--faults" -> faults = List.of(args[++i].split(","));
                case "--stores" -> stores = List.of(args[++i].split(","));
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
        List<Result> results = runAll(cells(stores, faults), rounds, work, r -> System.out.println(line(r)));
        Files.createDirectories(out.toAbsolutePath().getParent());
        MarkedSection.CLI.write(out, section(results, command));
        System.exit(results.stream().allMatch(Result::passed) ? 0 : 1);
    }

    static String line(Result r) {
        return String.format("%s %s: %s (%d rounds, %d commands, %d overlapping pairs, %d stale-fence lines, exits %s, "
                + "worst stop %d ms)%s", r.store(), r.fault(), r.passed() ? "PASS" : "FAIL", r.rounds(), r.log().runs().size(),
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
                + "times (about 12 s, much longer than the TTL), on every store. Two commands *overlap* when their lines interleave in that log (appends are ordered by the "
                + "kernel, so no clock is involved). **" + passed + " of " + results.size() + " scenarios meet their "
                + "expectation.** Faults hit a run whose command has just begun: `kill-cli` SIGKILLs its JVM, `stop-cli` "
                + "SIGSTOPs it for the TTL + 2 s, `kill-command` SIGKILLs the command, `partition-cli` cuts the JVM off "
                + "from the store (a proxy in front of every endpoint holds the bytes) for the TTL + 2 s, `freeze-both` "
                + "SIGSTOPs the JVM and its guard together (on SQLite: it does not depend on the store). On ZooKeeper "
                + "the session (" + ZK_SESSION.toSeconds() + " s) is shorter than the TTL, so it is the session that "
                + "must bound what a frozen or killed JVM leaves running. Exit codes: 70 lease lost (the command was "
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
                .append(GRACE.toSeconds()).append(" s (ZooKeeper: ").append(ZK_GRACE.toMillis()).append(" ms in a ")
                .append(ZK_SESSION.toSeconds()).append(" s session), ").append(HOSTS)
                .append(" hosts, commands that ignore SIGTERM).\n\n");
        b.append("| store | fault | rounds | commands run | overlapping commands | stale-fence lines | fence order | exit codes | "
                + "faulted command's last line after the fault | verdict |\n");
        b.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
        for (Result r : results) {
            b.append("| ").append(r.store()).append(" | ").append(r.fault()).append(" | ").append(r.rounds()).append(" | ").append(r.log().runs().size())
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
     * Runs the cells, one store's server processes at a time.
     *
     * @param cells what to run, grouped by store in the order given
     * @param rounds how many times to inject each fault
     * @param work the parent of the scenarios' directories
     * @param each told of each result as it comes
     * @return the results in cell order
     */
    static List<Result> runAll(List<Cell> cells, int rounds, Path work, java.util.function.Consumer<Result> each) throws Exception {
        List<Result> results = new ArrayList<>();
        Map<String, List<Cell>> byStore = cells.stream().collect(Collectors.groupingBy(Cell::store,
                java.util.LinkedHashMap::new, Collectors.toList()));
        for (Map.Entry<String, List<Cell>> e : byStore.entrySet()) {
            Path dir = Files.createDirectories(work.toAbsolutePath().resolve(e.getKey() + "-" + System.currentTimeMillis()));
            try (StoreInstance store = new StoreInstance(StoreSpec.named(e.getKey()), dir)) {
                store.applySchema();
                for (Cell cell : e.getValue()) {
                    Result r = run(store, cell.fault(), rounds, dir);
                    each.accept(r);
                    results.add(r);
                }
            }
        }
        return results;
    }

    /**
     * Runs one scenario.
     *
     * @param store the store, running
     * @param fault one of {@link #FAULTS}
     * @param rounds how many times to inject it
     * @param work the parent of the scenario's directory
     * @return what happened
     */
    static Result run(StoreInstance store, String fault, int rounds, Path work) throws Exception {
        if (!FAULTS.contains(fault)) {
            throw new IllegalArgumentException("unknown CLI fault '" + fault + "': use one of " + FAULTS);
        }
        Path dir = Files.createDirectories(work.toAbsolutePath().resolve(fault + "-" + System.currentTimeMillis()));
        Path log = dir.resolve("commands.log");
        Files.createFile(log);
        boolean viaProxy = fault.equals("partition-cli");
        String lock = "cli-chaos-" + store.spec().name() + "-" + dir.getFileName();
        List<Host> hosts = new ArrayList<>();
        List<Long> stopMillis = new ArrayList<>();
        int injected = 0;
        try {
            for (int h = 0; h < HOSTS; h++) {
                hosts.add(new Host(h, dir, log, lock, store, viaProxy));
            }
            hosts.forEach(Host::start);
            for (int round = 0; round < rounds; round++) {
                if (round > 0) {
                    Harness.sleep(1500);
                }
                // the first command is caught as it begins (its first lines), not after it ends
                Optional<Host.Running> holder = holder(hosts, log);
                // a loaded host stretches a command's 400 lines well past 12 s: wait for the next to begin
                for (int tries = 0; holder.isEmpty() && tries < 2000; tries++) {
                    Harness.sleep(25);
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
        return new Result(store.spec().name(), fault, rounds, injected, checked, exits, worst, dir.toString());
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
                holder.proxies().forEach(TcpProxy::blackhole);
                Harness.sleep(TTL.toMillis() + 2000);
                holder.proxies().forEach(TcpProxy::heal);
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
        record Running(String run, Process process, List<TcpProxy> proxies) {}

        private final int id;
        private final Path dir;
        private final Path log;
        private final String lock;
        private final StoreInstance store;
        private final boolean viaProxy;
        private final Thread loop;
        private final Map<Integer, Integer> exits = new ConcurrentHashMap<>();
        private volatile boolean stopping;
        private volatile Running current;

        Host(int id, Path dir, Path log, String lock, StoreInstance store, boolean viaProxy) {
            this.id = id;
            this.dir = dir;
            this.log = log;
            this.lock = lock;
            this.store = store;
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
                List<TcpProxy> proxies = viaProxy ? store.endpoints().stream().map(Host::proxyTo).toList() : List.of();
                try {
                    Process p = spawn(run, proxies);
                    current = new Running(run, p, proxies);
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
                    proxies.forEach(TcpProxy::close);
                }
            }
        }

        private static TcpProxy proxyTo(String hostPort) {
            int colon = hostPort.lastIndexOf(':');
            return new TcpProxy(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
        }

        private Process spawn(String run, List<TcpProxy> proxies) throws IOException {
            boolean zookeeper = store.spec().name().startsWith("zookeeper");
            List<String> via = proxies.isEmpty() ? store.endpoints() : proxies.stream().map(TcpProxy::hostPort).toList();
            String url = zookeeper ? store.url(via, ZK_SESSION) : store.url(via);
            Duration grace = zookeeper ? ZK_GRACE : GRACE;
            String command = "trap '' TERM; i=0; while [ $i -lt 400 ] && [ ! -e '" + dir.resolve("STOP") + "' ]; do echo \"$RUN $TURNSTILE_FENCE $(date +%s%N) $i\" >> '"
                    + log + "'; i=$((i+1)); sleep 0.025; done; echo \"$RUN $TURNSTILE_FENCE $(date +%s%N) end\" >> '" + log + "'";
            List<String> argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:+UnlockDiagnosticVMOptions", "-XX:-DisplayVMOutput",
                    "-cp", Cluster.workerClassPath(dir.getParent()), "dev.turnstile.cli.TurnstileCommand",
                    "run", "--store", url, "--lock", lock, "--ttl", TTL.toSeconds() + "s", "--grace", grace.toMillis() + "ms",
                    "--wait", "40s", "--", "sh", "-c", command));
            ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("host-" + id + ".log").toFile()));
            pb.environment().put("RUN", run);
            pb.environment().put("XDG_STATE_HOME", dir.toString());
            pb.environment().remove("TURNSTILE_STORE");
            return Harness.startInOwnSession(pb);
        }
    }
}
