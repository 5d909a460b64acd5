package dev.turnstile.chaos;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs the chaos matrix: every chosen fault against every chosen store it applies to, then writes
 * the report.
 *
 * <pre>
 * ChaosRun [--short | --long] [--stores sqlite,postgresql,mariadb,redis,redlock (also redis-sentinel,redis-sentinel-noack)]
 *          [--faults none,kill,pause,partition,latency,restart,redlock-minority,redlock-majority,clock,failover]
 *          [--out docs/reliability.md] [--work-dir turnstile-chaos/target/chaos] [--workers 5] [--command TEXT]
 * </pre>
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
        String command = null;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--short" -> mode = "short";
                    case "--long" -> mode = "long";
                    case "--stores" -> stores = List.of(value(args, ++i).split(","));
                    case "--faults" -> faults = List.of(value(args, ++i).split(","));
                    case "--out" -> out = Path.of(value(args, ++i));
                    case "--work-dir" -> work = Path.of(value(args, ++i));
                    case "--workers" -> workers = Integer.parseInt(value(args, ++i));
                    case "--command" -> command = value(args, ++i);
                    case "-h", "--help" -> {
                        System.out.println("usage: ChaosRun [--short|--long] [--stores " + String.join(",", StoreSpec.ALL) + " (also: "
                                + String.join(",", StoreSpec.EXTRA) + ")] [--faults "
                                + String.join(",", Fault.ALL) + "] [--out FILE.md] [--work-dir DIR] [--workers N]");
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
        ChaosConfig config = mode.equals("long") ? ChaosConfig.longRun(work) : ChaosConfig.shortRun(work);
        if (workers != null) {
            config = config.withWorkers(workers);
        }
        if (command == null) {
            command = "java " + ChaosRun.class.getName() + " " + String.join(" ", args);
        }
        List<ScenarioResult> results = runMatrix(stores, faults, config, true);
        Report.write(out, results, command, mode, config);
        long failed = results.stream().filter(r -> !r.passed()).count();
        System.out.println("report: " + out + " (" + (results.size() - failed) + " of " + results.size() + " scenarios pass)");
        System.exit(failed == 0 ? 0 : 1);
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

    private static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException(args[i - 1] + " needs a value");
        }
        return args[i];
    }
}
