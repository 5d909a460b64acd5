package dev.turnstile.chaos;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs the chaos matrix: every chosen fault against every chosen store it applies to, then writes
 * the report.
 *
 * <pre>
 * ChaosRun [--short | --long | --mixed] [--stores sqlite,postgresql,mariadb,redis,redlock,mongo,zookeeper
 *              (also redis-sentinel,redis-sentinel-noack,zookeeper-ensemble)]
 *          [--faults none,kill,pause,partition,latency,restart,redlock-minority,redlock-majority,clock,failover,store-pause,
 *              session-expiry,leader-loss]
 *          [--seed N] [--mixed-seconds 60] [--rounds N]
 *          [--out docs/reliability.md] [--work-dir turnstile-chaos/target/chaos] [--workers 5] [--command TEXT]
 * </pre>
 *
 * <p>{@code --short} (the default) writes the document outside its marked sections. {@code --long}
 * runs every cell for {@link ChaosConfig#longRun 20 rounds}, then the mixed run (a seeded random
 * schedule of faults, {@link Fault.Mixed}) on every store for {@code --mixed-seconds}, and writes
 * only the document's {@link MarkedSection#LONG long-run section}; {@code --mixed} runs only the
 * mixed part (and writes the long-run section with it alone: give it another {@code --out}). The
 * seed is printed at the start; {@code --seed} replays a schedule.
 *
 * <p>Exit code 0 when every scenario passes, 1 when one fails, 2 for bad arguments.
 */
public final class ChaosRun {
    private ChaosRun() {}

    /**
     * Runs the matrix.
     *
     * @param args see the class comment
     */
    public static void main(String[] args) {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        String mode = "short";
        List<String> stores = StoreSpec.ALL;
        List<String> faults = Fault.ALL;
        Path out = Path.of("docs/reliability.md");
        Path work = Path.of("turnstile-chaos/target/chaos");
        Integer workers = null;
        Integer rounds = null;
        Long seed = null;
        int mixedSeconds = 60;
        String command = null;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--short" -> mode = "short";
                    case "--long" -> mode = "long";
                    case "--mixed" -> mode = "mixed";
                    case "--stores" -> stores = List.of(value(args, ++i).split(","));
                    case "--faults" -> faults = List.of(value(args, ++i).split(","));
                    case "--out" -> out = Path.of(value(args, ++i));
                    case "--work-dir" -> work = Path.of(value(args, ++i));
                    case "--workers" -> workers = positive(args, ++i);
                    case "--rounds" -> rounds = positive(args, ++i);
                    case "--mixed-seconds" -> mixedSeconds = positive(args, ++i);
                    case "--seed" -> seed = number(args, ++i);
                    case "--command" -> command = value(args, ++i);
                    case "-h", "--help" -> {
                        System.out.println("usage: ChaosRun [--short|--long|--mixed] [--stores " + String.join(",", StoreSpec.ALL)
                                + " (also: " + String.join(",", StoreSpec.EXTRA) + ")] [--faults " + String.join(",", Fault.ALL)
                                + "] [--seed N] [--mixed-seconds N] [--rounds N] [--out FILE.md] [--work-dir DIR] [--workers N]");
                        return;
                    }
                    default -> throw new IllegalArgumentException("unknown option '" + args[i] + "' (try --help)");
                }
            }
            stores.forEach(StoreSpec::named);
            faults.forEach(Fault::named);
        } catch (IllegalArgumentException e) {
            System.err.println("ChaosRun: " + e.getMessage());
            System.exit(2);
            return;
        }
        ChaosConfig config = mode.equals("short") ? ChaosConfig.shortRun(work) : ChaosConfig.longRun(work);
        if (workers != null) {
            config = config.withWorkers(workers);
        }
        if (rounds != null) {
            config = config.withRounds(rounds);
        }
        if (command == null) {
            command = "java " + ChaosRun.class.getName() + " " + String.join(" ", args);
        }
        if (mode.equals("short")) {
            List<ScenarioResult> results = runMatrix(stores, faults, config, true);
            Report.write(out, results, command, mode, config);
            long failed = results.stream().filter(r -> !r.passed()).count();
            System.out.println("report: " + out + " (" + (results.size() - failed) + " of " + results.size() + " scenarios pass)");
            System.exit(failed == 0 ? 0 : 1);
            return;
        }
        long theSeed = seed != null ? seed : new java.security.SecureRandom().nextLong();
        System.out.println("mixed-run seed: " + theSeed + " (replay its schedule with --seed " + theSeed + ")");
        LoadSampler load = LoadSampler.start();
        long start = System.nanoTime();
        List<ScenarioResult> matrix = mode.equals("long") ? runMatrix(stores, faults, config, true) : List.of();
        List<ScenarioResult> mixed = runMixed(stores, theSeed, Duration.ofSeconds(mixedSeconds), config, true);
        long wall = Duration.ofNanos(System.nanoTime() - start).toMillis();
        Report.writeLong(out, matrix, mixed, command, config,
                new Report.LongRun(theSeed, Duration.ofSeconds(mixedSeconds), wall, load.stop()));
        long failed = matrix.stream().filter(r -> !r.passed()).count() + mixed.stream().filter(r -> !r.passed()).count();
        System.out.println("report: " + out + " (long-run section; " + (matrix.size() + mixed.size() - failed) + " of "
                + (matrix.size() + mixed.size()) + " scenarios pass; seed " + theSeed + "; " + wall / 60000 + " min)");
        System.exit(failed == 0 ? 0 : 1);
    }

    /**
     * Runs the mixed schedule on every store, one after the other.
     *
     * @param stores store names
     * @param seed the schedule's seed
     * @param length how long faults go on per store
     * @param config the sizing
     * @param progress print a line per store
     * @return the results, store by store
     */
    public static List<ScenarioResult> runMixed(List<String> stores, long seed, Duration length, ChaosConfig config,
            boolean progress) {
        List<ScenarioResult> results = new ArrayList<>();
        for (String name : stores) {
            StoreSpec store = StoreSpec.named(name);
            ScenarioResult r = Scenario.run(store, new Fault.Mixed(seed, length, store), config);
            results.add(r);
            if (progress) {
                System.out.printf("[mixed] %s: %s (%.1f s, %d steps: %s; %d acquisitions, %d overlaps)%s%n", r.store(),
                        r.passed() ? "PASS" : "FAIL", r.wallMillis() / 1000.0, r.rounds(), r.schedule(), r.acquisitions(),
                        r.overlaps() == null ? 0 : r.overlaps().count(), r.passed() ? "" : " " + r.failures());
            }
        }
        return results;
    }

    /**
     * Runs every applicable store × fault pair, one after the other.
     *
     * @param stores store names
     * @param faults fault names
     * @param config the sizing
     * @param progress print a line per scenario
     * @return the results, store by store
     */
    public static List<ScenarioResult> runMatrix(List<String> stores, List<String> faults, ChaosConfig config, boolean progress) {
        List<StoreSpec> storeSpecs = stores.stream().map(StoreSpec::named).toList();
        List<Fault> faultList = faults.stream().map(Fault::named).toList();
        List<StoreSpec> s2 = new ArrayList<>();
        List<Fault> f2 = new ArrayList<>();
        for (StoreSpec s : storeSpecs) {
            for (Fault f : faultList) {
                if (f.appliesTo(s)) {
                    s2.add(s);
                    f2.add(f);
                }
            }
        }
        List<ScenarioResult> results = new ArrayList<>();
        for (int i = 0; i < s2.size(); i++) {
            ScenarioResult r = Scenario.run(s2.get(i), f2.get(i), config);
            results.add(r);
            if (progress) {
                System.out.printf("[%d/%d] %s × %s: %s (%.1f s, %d acquisitions, %d overlaps)%s%n", i + 1, s2.size(), r.store(),
                        r.fault(), r.passed() ? "PASS" : "FAIL", r.wallMillis() / 1000.0, r.acquisitions(),
                        r.overlaps() == null ? 0 : r.overlaps().count(), r.passed() ? "" : " " + r.failures());
            }
        }
        return results;
    }

    private static int positive(String[] args, int i) {
        long n = number(args, i);
        if (n < 1 || n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(args[i - 1] + " needs a whole number of at least 1, not '" + args[i] + "'");
        }
        return (int) n;
    }

    private static long number(String[] args, int i) {
        String v = value(args, i);
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(args[i - 1] + " needs a whole number, not '" + v + "'");
        }
    }

    private static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException(args[i - 1] + " needs a value");
        }
        return args[i];
    }
}
