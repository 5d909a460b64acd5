package dev.turnstile.console;

import dev.turnstile.claim.ClaimSummary;
import dev.turnstile.claim.TaskClaimer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The claim tables page: for each task table an application claims from, its tasks per phase
 * (free, claimed, overdue) and the stuck ones, the longest without progress first; and the
 * confirmation that releases a stuck claim. Each table is read on its own: one that cannot be
 * read says so and leaves the others shown.
 */
final class ClaimsPage {
    /** The most stuck tasks a table lists. */
    static final int MAX_STUCK = 50;

    private ClaimsPage() {}

    /** One table as the page shows it: its claimer, and its summary or why there is none. */
    record Table(TaskClaimer claimer, Duration stuckAfter, @Nullable ClaimSummary summary, @Nullable String problem) {
        String name() {
            return claimer.store().table().table();
        }
    }

    static String body(ConsoleRequest r, List<Table> tables, Instant consoleNow, boolean actions) {
        StringBuilder b = new StringBuilder(2048);
        b.append("<h1>Claim tables</h1>");
        if (tables.isEmpty()) {
            return b.append("<p class=\"summary\" id=\"claims-none\">No claim tables are known to this console: an "
                    + "application's <code>TaskClaimer</code> beans show here, and <code>turnstile console --claim-table "
                    + "TABLE</code> shows a table of the store by its name.</p>").toString();
        }
        b.append("<div id=\"live\" data-refresh=\"5\"><p class=\"summary\">Free: not claimed, due at once. Claimed: held by "
                + "a claimer, or waiting out a relock back-off (the table keeps one time for both). Overdue: due again, "
                + "its claim lapsed or its back-off ended, and no claimer has taken it yet. Stuck: claimed, backing off "
                + "or overdue, with no progress (unlock or moveTo) for longer than the threshold.</p>");
        String base = Html.text(r.basePath());
        for (Table t : tables) {
            table(b, base, t, consoleNow, actions);
        }
        return b.append("</div>").toString();
    }

    private static void table(StringBuilder b, String base, Table t, Instant consoleNow, boolean actions) {
        String name = Html.text(t.name());
        b.append("<section class=\"claim-table\" data-table=\"").append(name).append("\"><h2>Table ").append(name)
                .append("</h2>");
        ClaimSummary s = t.summary();
        if (s == null) {
            b.append("<p class=\"bad\">").append(Html.text(t.problem())).append("</p></section>");
            return;
        }
        Instant now = s.storeNow() != null ? s.storeNow() : consoleNow;
        long total = s.phases().stream().mapToLong(ClaimSummary.PhaseCounts::total).sum();
        b.append("<p class=\"summary\">").append(LocksPage.count((int) Math.min(total, Integer.MAX_VALUE), "task"))
                .append(" in ").append(LocksPage.count(s.phases().size(), "phase"))
                .append(s.morePhases() ? " (the first " + ClaimSummary.MAX_PHASES + " phases by name: the table has more, "
                        + "and their tasks are not counted here)" : "")
                .append("; lock timeout ").append(Html.duration(s.lockTimeout())).append(", stuck after ")
                .append(Html.duration(t.stuckAfter())).append(" without progress.</p>");
        long neverClaimed = s.phases().stream().mapToLong(ClaimSummary.PhaseCounts::neverClaimed).sum();
        if (neverClaimed > 0) {
            b.append("<p class=\"bad never-claimed\">").append(LocksPage.count((int) Math.min(neverClaimed, Integer.MAX_VALUE), "task"))
                    .append(" can never be claimed: a NULL lockedAt, which no claim selects. Set it to 0 (and declare the "
                            + "column NOT NULL DEFAULT 0).</p>");
        }
        if (!s.phases().isEmpty()) {
            b.append("<table class=\"phases\"><thead><tr><th>Phase</th><th class=\"num\">Tasks</th><th class=\"num\">Free</th>")
                    .append("<th class=\"num\">Claimed</th><th class=\"num\">Overdue</th><th>Overdue since</th></tr></thead><tbody>");
            for (ClaimSummary.PhaseCounts p : s.phases()) {
                b.append("<tr><td class=\"name\">").append(p.phase() == null ? "<span class=\"muted\">none</span>" : Html.text(p.phase()))
                        .append("</td><td class=\"num\">").append(p.total()).append("</td><td class=\"num\">").append(p.free())
                        .append("</td><td class=\"num\">").append(p.claimed()).append("</td><td class=\"num")
                        .append(p.overdue() > 0 ? " bad" : "").append("\">").append(p.overdue()).append("</td><td>");
                if (p.oldestOverdueSince() != null) {
                    b.append(Html.time(p.oldestOverdueSince())).append(" (").append(Html.duration(Duration.between(p.oldestOverdueSince(), now)))
                            .append(" ago)");
                }
                b.append("</td></tr>");
            }
            b.append("</tbody></table>");
        }
        if (s.stuck().isEmpty()) {
            b.append("<p class=\"stuck-none\">No stuck tasks.</p></section>");
            return;
        }
        b.append("<h3>Stuck tasks").append(s.stuck().size() == MAX_STUCK ? " (the " + MAX_STUCK + " longest)" : "").append("</h3>")
                .append("<table class=\"stuck\"><thead><tr><th>Task</th><th>Phase</th><th>No progress since</th>")
                .append("<th>Claimed or due</th><th class=\"num\">Version</th>").append(actions ? "<th></th>" : "")
                .append("</tr></thead><tbody>");
        for (ClaimSummary.StuckTask task : s.stuck()) {
            Instant dueAt = task.lockedAt().plus(s.lockTimeout());
            b.append("<tr><td class=\"name\">").append(Html.text(task.keyText())).append("</td><td>").append(Html.text(task.phase()))
                    .append("</td><td>").append(Html.time(task.updatedAt())).append(" (")
                    .append(Html.duration(Duration.between(task.updatedAt(), now))).append(")</td><td>")
                    .append(dueAt.isAfter(now) ? "held or backing off until " + Html.time(dueAt) : "<span class=\"bad\">overdue since "
                            + Html.time(dueAt) + "</span>")
                    .append("</td><td class=\"num\">").append(task.version()).append("</td>");
            if (actions && !releasable(task)) {
                b.append("<td></td>");
            } else if (actions) {
                b.append("<td><a class=\"release-claim\" href=\"").append(base).append("/claims/release?table=")
                        .append(Html.text(Html.url(t.name()))).append("&amp;key=").append(Html.text(Html.url(task.keyText())))
                        .append("&amp;version=").append(task.version()).append("&amp;updated=")
                        .append(task.updatedAt().toEpochMilli()).append("\">Release…</a></td>");
            }
            b.append("</tr>");
        }
        b.append("</tbody></table></section>");
    }

    /**
     * Whether the console offers to release a task: its key must not read as U+FFFD anywhere, which
     * is what bytes that are not valid text read as (the release would name another task's key).
     */
    static boolean releasable(ClaimSummary.StuckTask task) {
        return task.keyText().indexOf('\uFFFD') < 0;
    }

    /** The confirmation that releases a stuck claim. */
    static String confirmation(ConsoleRequest r, String table, ClaimSummary.StuckTask task, Duration lockTimeout, Instant now) {
        String base = Html.text(r.basePath());
        StringBuilder b = new StringBuilder(1024);
        b.append("<h1>Release a stuck claim</h1><dl class=\"lock\" id=\"confirm\">")
                .append("<dt>Table</dt><dd>").append(Html.text(table)).append("</dd>")
                .append("<dt>Task</dt><dd class=\"name\">").append(Html.text(task.keyText())).append("</dd>")
                .append("<dt>Phase</dt><dd>").append(Html.text(task.phase())).append("</dd>")
                .append("<dt>Claim version</dt><dd>").append(task.version()).append("</dd>")
                .append("<dt>No progress since</dt><dd>").append(Html.time(task.updatedAt())).append(" (")
                .append(Html.duration(Duration.between(task.updatedAt(), now))).append(")</dd>")
                .append("<dt>Due again</dt><dd>").append(Html.time(task.lockedAt().plus(lockTimeout)))
                .append(" (by its claimers' lock timeout, ").append(Html.duration(lockTimeout)).append(")</dd></dl>")
                .append("<p class=\"warning\">The task becomes due at once and the next claimer takes it. Its claim version ")
                .append("is raised, so the claimer that holds it now (if it is still working) has its next heartbeat or ")
                .append("write refused and is told it lost the task. Its last progress time is kept.</p>");
        ConsoleRequest.CsrfField csrf = r.csrf();
        if (csrf == null) {
            return b.append(Layout.message("Actions unavailable", "This server gives the console no CSRF token, so it "
                    + "refuses every action.")).toString();
        }
        b.append("<form method=\"post\" action=\"").append(base).append("/claims/release\">");
        Html.hidden(b, "table", table);
        // percent-encoded: a browser does not post every character of a field back as it got it (it
        // reads &#150; as Windows-1252's en dash and sends a lone CR or LF as CRLF); ASCII it does
        Html.hidden(b, "key", Html.url(task.keyText()));
        Html.hidden(b, "version", Long.toString(task.version()));
        Html.hidden(b, "updated", Long.toString(task.updatedAt().toEpochMilli()));
        Html.hidden(b, csrf.name(), csrf.value());
        r.formFields().forEach((k, v) -> Html.hidden(b, k, v));
        return b.append("<button type=\"submit\" id=\"confirm-release\" class=\"danger\">Release this claim</button> ")
                .append("<a href=\"").append(base).append("/claims\">Cancel</a></form>").toString();
    }

    static String back(ConsoleRequest r) {
        return "<p><a href=\"" + Html.text(r.basePath()) + "/claims\">Back to the claim tables</a></p>";
    }
}
