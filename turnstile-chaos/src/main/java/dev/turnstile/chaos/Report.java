package dev.turnstile.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Writes a run's results as Markdown (a table per store × fault) and as JSON beside it. */
public final class Report {
    private Report() {}

    /**
     * Writes {@code out} (Markdown) and {@code out} with a {@code .json} extension.
     *
     * @param out the Markdown file
     * @param results the scenarios
     * @param command the command that reproduces the run
     * @param mode {@code short} or {@code long}
     * @param config the sizing
     */
    public static void write(Path out, List<ScenarioResult> results, String command, String mode, ChaosConfig config) {
        Path json = out.resolveSibling(out.getFileName().toString().replaceFirst("\\.md$", "") + ".json");
        try {
            if (out.toAbsolutePath().getParent() != null) {
                Files.createDirectories(out.toAbsolutePath().getParent());
            }
            String marked = MarkedSection.allIn(out); // the long run's and CliChaos's parts of the document stay
            Files.writeString(out, markdown(results, command, mode, config) + (marked.isEmpty() ? "" : "\n" + marked));
            Files.writeString(json, Json.pretty(json(results, command, mode, config)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Map<String, Object> json(List<ScenarioResult> results, String command, String mode, ChaosConfig c) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("command", command);
        m.put("generated", OffsetDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.SECONDS).toString());
        m.put("mode", mode);
        Map<String, Object> cfg = new LinkedHashMap<>();
        cfg.put("workers", c.workers());
        cfg.put("ttlMs", c.ttl().toMillis());
        cfg.put("heartbeatMs", c.heartbeat().toMillis());
        cfg.put("holdMs", c.hold().toMillis());
        cfg.put("rounds", c.rounds());
        cfg.put("recoveryLimitMs", c.recoveryLimit().toMillis());
        cfg.put("lossNoticeLimitMs", c.lossNoticeLimit().toMillis());
        m.put("config", cfg);
        m.put("passed", results.stream().filter(ScenarioResult::passed).count());
        m.put("scenarios", results.size());
        List<Object> rs = new ArrayList<>();
        results.forEach(r -> rs.add(r.toMap()));
        m.put("results", rs);
        return m;
    }

    static String markdown(List<ScenarioResult> results, String command, String mode, ChaosConfig c) {
        StringBuilder b = new StringBuilder();
        b.append("# Turnstile reliability: fault-injection runs\n\n");
        b.append("Reproduce with:\n\n```\n").append(command).append("\n```\n\n");
        long passed = results.stream().filter(ScenarioResult::passed).count();
        b.append(String.format("Generated %s (%s run) on a %d-core machine: %d worker JVMs per scenario contend for one lock "
                + "with TTL %d ms, keep-alive every %d ms, a hold of %d ms between two fenced writes to a PostgreSQL row, "
                + "and %d fault round(s) per scenario. **%d of %d scenarios pass.** Machine-readable: `reliability.json` beside this file.%n%n",
                OffsetDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.SECONDS), mode, Runtime.getRuntime().availableProcessors(),
                c.workers(), c.ttl().toMillis(), c.heartbeat().toMillis(), c.hold().toMillis(), c.rounds(), passed, results.size()));
        b.append("| store | fault | acquisitions | overlaps (longest) | writes out of order | stale writes rejected "
                + "| fence regressions | worst recovery | taken-over leases told / silent | result | notes |\n");
        b.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
        for (ScenarioResult r : results) {
            b.append("| ").append(r.store()).append(" | ").append(r.fault()).append(" | ").append(r.acquisitions()).append(" | ");
            if (r.overlaps() != null) {
                b.append(r.overlaps().count()).append(r.overlaps().count() > 0 ? " (" + Verdict.ms(r.overlaps().maxMillis()) + ")" : "");
            }
            b.append(" | ").append(r.fences() == null ? "" : r.fences().outOfOrder().size());
            b.append(" | ").append(r.fences() == null ? "" : r.fences().rejected());
            b.append(" | ").append(r.fences() == null ? "" : r.fences().regressions().size());
            b.append(" | ");
            if (r.recovery() != null && !r.recovery().recoveries().isEmpty()) {
                b.append(Verdict.ms(r.recovery().worstMillis()));
            } else {
                b.append("–");
            }
            b.append(" | ");
            if (r.losses() != null) {
                b.append(r.losses().told()).append(" / ").append(r.losses().silent().size());
            }
            b.append(" | ").append(r.passed() ? "PASS" : "**FAIL**");
            List<String> cells = new ArrayList<>();
            r.failures().forEach(f -> cells.add("FAIL: " + f));
            cells.addAll(r.notes());
            b.append(" | ").append(escape(String.join("; ", cells))).append(" |\n");
        }
        b.append("\n## Faults\n\n");
        List<String> seen = new ArrayList<>();
        for (ScenarioResult r : results) {
            if (!seen.contains(r.fault())) {
                seen.add(r.fault());
                b.append("- **").append(r.fault()).append("**: ").append(r.faultDescription()).append(".\n");
            }
        }
        b.append("\n## Columns and pass criteria\n\n");
        b.append("- **overlaps**: pairs of workers that both believed they held the lock at once. A hold runs from the "
                + "return of `acquire` to the earlier of the `release` call and the `onLost` notification (a SIGKILLed holder's "
                + "ends at the kill). Must be 0 on single-node stores (SQL, Redis) under kill, partition, latency and no fault, "
                + "under client clock jumps (except SQLite, which has no clock but its clients'), and under a restart of a "
                + "durable store. A paused holder cannot know it is frozen: overlaps with it are noted, not failed; any other "
                + "overlap fails. Where a store cannot promise exclusion (Redis restarted without persistence, Redlock, "
                + "SQLite under clock jumps) the overlaps are shown in the notes, not hidden.\n");
        b.append("- **writes out of order**: from the resource's log of accepted writes in commit order, a fence lower than an "
                + "earlier accepted one, or equal to it from another holder. Must be 0 everywhere. The resource is fenced by the "
                + "shipped helper, `SqlFences.check` (turnstile-jdbc), in the transaction that logs the write; it admits a fence "
                + "equal to the highest, so a holder's own second write under the same fence passes.\n");
        b.append("- **stale writes rejected**: writes `SqlFences.check` refused (`StaleFenceException`) because a newer "
                + "holder had written; a stale write it accepted would show in the column before, and in the pause checks.\n");
        b.append("- **fence regressions**: acquires that returned a fence not above one issued before. Must be 0 on stores "
                + "with safe fences; Redlock does not promise it.\n");
        b.append(String.format("- **worst recovery**: from the harness's kill/pause/partition of the holder to the next acquire "
                + "by another worker. Limit TTL + one heartbeat + 1 s = %d ms.%n", c.recoveryLimit().toMillis()));
        b.append(String.format("- **taken-over leases told / silent**: leases another worker took over (acquired a higher "
                + "fence) before their holder released, split by whether the holder was told (an `onLost` notification, or a "
                + "release outcome other than RELEASED/SHORTENED_TO_AT_LEAST). SIGKILLed holders are excluded. Silent must "
                + "be 0. A paused holder must also be told within one heartbeat + 1 s (%d ms) of running again, and its "
                + "stale write must be rejected.%n", c.lossNoticeLimit().toMillis()));
        List<ScenarioResult> failed = results.stream().filter(r -> !r.passed()).toList();
        if (!failed.isEmpty()) {
            b.append("\n## Failures\n\n");
            for (ScenarioResult r : failed) {
                b.append("- ").append(r.store()).append(" × ").append(r.fault()).append(" (`").append(r.dir()).append("`):\n");
                r.failures().forEach(f -> b.append("  - ").append(f).append('\n'));
            }
        }
        return b.toString();
    }

    /**
     * What the long run needs besides its results: the mixed run's seed and how the machine was.
     *
     * @param seed the mixed run's seed
     * @param mixedLength how long each store's mixed run went on
     * @param wallMillis the whole run's duration
     * @param machine cores and load during the run, in words
     */
    record LongRun(long seed, java.time.Duration mixedLength, long wallMillis, String machine) {}

    /**
     * Writes the long run's tables as the {@link MarkedSection#LONG} section of {@code out} (the rest
     * of it, the short run's table and the CLI section, stays as it is) and its JSON twin
     * ({@code out} with a {@code -long.json} ending).
     *
     * @param out the Markdown file
     * @param matrix the store × fault cells, 20 rounds each
     * @param mixed the mixed runs, one per store
     * @param command the command that reproduces the run
     * @param config the sizing
     * @param run the seed, duration and machine
     */
    public static void writeLong(Path out, List<ScenarioResult> matrix, List<ScenarioResult> mixed, String command,
            ChaosConfig config, LongRun run) {
        Path json = out.resolveSibling(out.getFileName().toString().replaceFirst("\\.md$", "") + "-long.json");
        try {
            if (out.toAbsolutePath().getParent() != null) {
                Files.createDirectories(out.toAbsolutePath().getParent());
            }
            MarkedSection.LONG.write(out, longMarkdown(matrix, mixed, command, config, run, json.getFileName().toString()));
            Map<String, Object> m = json(matrix, command, "long", config);
            m.put("seed", run.seed());
            m.put("mixedSeconds", run.mixedLength().toSeconds());
            m.put("wallSeconds", run.wallMillis() / 1000);
            m.put("machine", run.machine());
            m.put("mixedPassed", mixed.stream().filter(ScenarioResult::passed).count());
            List<Object> ms = new ArrayList<>();
            mixed.forEach(r -> ms.add(r.toMap()));
            m.put("mixed", ms);
            Files.writeString(json, Json.pretty(m));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String longMarkdown(List<ScenarioResult> matrix, List<ScenarioResult> mixed, String command, ChaosConfig c, LongRun run,
            String jsonName) {
        StringBuilder b = new StringBuilder();
        long passed = matrix.stream().filter(ScenarioResult::passed).count();
        long mixedPassed = mixed.stream().filter(ScenarioResult::passed).count();
        int minRounds = matrix.stream().mapToInt(ScenarioResult::rounds).min().orElse(0);
        b.append("## Long run: ").append(c.rounds()).append(" fault rounds per cell, and a mixed random schedule\n\n");
        b.append("Reproduce with (the seed replays the mixed run's schedule of faults):\n\n```\n").append(command);
        if (!command.contains("--seed")) {
            b.append(" --seed ").append(run.seed());
        }
        b.append("\n```\n\n");
        b.append(String.format("Generated %s in %d min on a %s. Sizing, shorter than the short run's so that %d rounds of every "
                + "cell fit in about an hour: %d worker JVMs per cell, TTL %d ms, keep-alive every %d ms; long holds (%d ms "
                + "between the two fenced writes, living on keep-alive) are %.0f%% of the holds plus one the harness asks for "
                + "before each fault, the others last 0-%d ms, so a cell sees hundreds of hand-overs; each round is %d ms of contention, the fault (aimed at a holder in a long hold), "
                + "then %d ms to settle; pauses, partitions and Redlock node losses last %d ms, latency %d ms, each clock jump "
                + "%d ms. Recovery limit TTL + one heartbeat + 1 s = %d ms; a paused holder must be told within %d ms of "
                + "running again. **%d of %d cells pass** (each with at least %d rounds); **%d of %d mixed runs pass**. "
                + "Machine-readable: `%s` beside this file.%n%n",
                OffsetDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.MINUTES), Math.round(run.wallMillis() / 60000.0),
                run.machine(), c.rounds(), c.workers(), c.ttl().toMillis(), c.heartbeat().toMillis(), c.hold().toMillis(),
                100 * c.longHoldShare(), c.shortHold().toMillis(), c.warmup().toMillis(), c.settle().toMillis(), c.outage().toMillis(),
                c.latencySpell().toMillis(), c.clockStep().toMillis(), c.recoveryLimit().toMillis(), c.lossNoticeLimit().toMillis(),
                passed, matrix.size(), minRounds, mixedPassed, mixed.size(), jsonName));
        if (!matrix.isEmpty()) {
            b.append("| store | fault | rounds | acquisitions | overlaps (longest) | writes accepted / out of order "
                    + "| stale writes rejected | fence regressions | recovery median / worst | taken over: told / silent "
                    + "| paused holders told in time | result | notes |\n");
            b.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
            for (ScenarioResult r : matrix) {
                b.append("| ").append(r.store()).append(" | ").append(r.fault()).append(" | ");
                cells(b, r);
            }
        }
        if (!mixed.isEmpty()) {
            b.append(String.format("%n### Mixed run: seed %d, %d s of random faults per store%n%n", run.seed(),
                    run.mixedLength().toSeconds()));
            b.append("Each store in turn: the same workers and checks as above, while a random schedule (seeded; "
                    + "each store's mixes its name into the seed) injects one fault after another with a random 0-")
                    .append(c.settle().toMillis()).append(" ms gap. Worker faults (kill, pause, partition, clock) hit the "
                    + "holder or, as often, any live worker (a bystander: waiting, thinking or, after all, holding); a "
                    + "killed worker is replaced at once. Single-node stores draw only the faults under which they promise "
                    + "exclusion (no restart of a Redis without persistence, no clock jump on SQLite), so any overlap fails; "
                    + "Redlock draws all of its faults. The same seed gives the same schedule; what the workers do "
                    + "meanwhile is up to the machine.\n\n");
            b.append("| store | steps | schedule | acquisitions | overlaps (longest) | writes accepted / out of order "
                    + "| stale writes rejected | fence regressions | recovery median / worst | taken over: told / silent "
                    + "| paused holders told in time | result | notes |\n");
            b.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
            for (ScenarioResult r : mixed) {
                b.append("| ").append(r.store()).append(" | ").append(r.rounds()).append(" | ").append(escape(r.schedule()))
                        .append(" | ");
                cells(b, r.withRounds(-1, r.schedule()));
            }
        }
        List<ScenarioResult> failed = new ArrayList<>();
        matrix.stream().filter(r -> !r.passed()).forEach(failed::add);
        mixed.stream().filter(r -> !r.passed()).forEach(failed::add);
        if (!failed.isEmpty()) {
            b.append("\n### Failures of the long run\n\n");
            for (ScenarioResult r : failed) {
                b.append("- ").append(r.store()).append(" × ").append(r.fault())
                        .append(r.fault().equals("mixed") ? " (seed " + run.seed() + ")" : "").append(" (`").append(r.dir()).append("`):\n");
                r.failures().stream().limit(10).forEach(f -> b.append("  - ").append(escape(f)).append('\n'));
                if (r.failures().size() > 10) {
                    b.append("  - … and ").append(r.failures().size() - 10).append(" more (see the JSON)\n");
                }
            }
        }
        b.append("\nThe columns are those of the short table, summed over the rounds; \"recovery\" is over every kill, pause "
                + "and partition (of a holder or, in the mixed run, of a bystander); \"paused holders told in time\" counts the "
                + "pauses that stopped a holder. Notes that repeat each round are shown once with their count.\n");
        return b.toString();
    }

    /** The cells from "rounds" (when {@code r.rounds() >= 0}) to "notes" of a long-run row. */
    private static void cells(StringBuilder b, ScenarioResult r) {
        if (r.rounds() >= 0) {
            b.append(r.rounds()).append(" | ");
        }
        b.append(r.acquisitions()).append(" | ");
        b.append(r.overlaps().count()).append(r.overlaps().count() > 0 ? " (" + Verdict.ms(r.overlaps().maxMillis()) + ")" : "");
        b.append(" | ").append(r.fences().accepted()).append(" / ").append(r.fences().outOfOrder().size());
        b.append(" | ").append(r.fences().rejected());
        b.append(" | ").append(r.fences().regressions().size());
        b.append(" | ");
        double[] rec = r.recovery().recoveries().stream().mapToDouble(RecoveryChecker.Recovery::millis).sorted().toArray();
        b.append(rec.length == 0 ? "–" : Verdict.ms(rec[rec.length / 2]) + " / " + Verdict.ms(rec[rec.length - 1]));
        b.append(" | ").append(r.losses().told()).append(" / ").append(r.losses().silent().size());
        long paused = r.pausedHolders();
        long pausedOk = r.pauses().stream().filter(p -> p.hold() != null && p.ok()).count();
        b.append(" | ").append(paused == 0 ? "–" : pausedOk + " of " + paused);
        b.append(" | ").append(r.passed() ? "PASS" : "**FAIL** (" + r.failures().size() + ")");
        b.append(" | ").append(escape(String.join("; ", collapse(r.notes())))).append(" |\n");
    }

    /** Notes that differ only in their numbers, once each: the first with "(×N)". */
    static List<String> collapse(List<String> notes) {
        Map<String, List<String>> groups = new LinkedHashMap<>();
        for (String n : notes) {
            groups.computeIfAbsent(n.replaceAll("[0-9]+(\\.[0-9]+)?", "#"), k -> new ArrayList<>()).add(n);
        }
        List<String> out = new ArrayList<>();
        groups.values().forEach(g -> out.add(g.get(0) + (g.size() > 1 ? " (and " + (g.size() - 1) + " more like it)" : "")));
        return out;
    }

    private static String escape(String s) {
        return s.replace("|", "\\|").replace("\n", " ");
    }
}
