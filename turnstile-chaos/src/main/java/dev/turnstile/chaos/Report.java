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
            String cliSection = CliSection.in(out); // CliChaos's part of the document stays
            Files.writeString(out, markdown(results, command, mode, config) + (cliSection.isEmpty() ? "" : "\n" + cliSection));
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
                + "earlier accepted one, or equal to it from another holder. Must be 0 everywhere. The resource accepts "
                + "`WHERE last_fence <= ?` (`<=` so a holder's own second write under the same fence passes).\n");
        b.append("- **stale writes rejected**: writes the fence refused because a newer holder had written.\n");
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

    private static String escape(String s) {
        return s.replace("|", "\\|").replace("\n", " ");
    }
}
