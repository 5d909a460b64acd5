package dev.turnstile.console;

import dev.turnstile.job.JobResult;
import dev.turnstile.job.JobRunReport;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/** The jobs page: what this application's scheduled jobs did, from its {@link JobHistory}. */
final class JobsPage {
    private JobsPage() {}

    static String body(@Nullable JobHistory history, Map<String, Instant> nextTicks, String owner, Instant now) {
        StringBuilder b = new StringBuilder(2048);
        b.append("<h1>Scheduled jobs</h1>");
        if (history == null && nextTicks.isEmpty()) {
            return b.append("<p class=\"summary\" id=\"jobs-none\">Jobs are recorded by the application that runs them: "
                    + "this console was not given a job history (the Spring Boot starter gives it one; in plain Java, "
                    + "register a <code>JobHistory</code> on the <code>JobRunner</code> and pass it to "
                    + "<code>Console.builder(…).jobs(…)</code>). <code>turnstile console</code> runs no jobs.</p>").toString();
        }
        Map<String, JobHistory.@Nullable JobStats> jobs = new TreeMap<>();
        nextTicks.keySet().forEach(name -> jobs.put(name, null));
        if (history != null) {
            history.jobs().forEach(j -> jobs.put(j.name(), j));
        }
        b.append("<div id=\"live\" data-refresh=\"5\"><p class=\"summary\">Jobs scheduled or run through this instance (")
                .append(Html.text(owner)).append(") since it started: ").append(LocksPage.count(jobs.size(), "job"))
                .append(". Other instances keep their own; the locks page shows who holds a job's lock now.</p>");
        if (jobs.isEmpty()) {
            return b.append("<p id=\"jobs-empty\">No job has run yet.</p></div>").toString();
        }
        b.append("<table id=\"jobs\"><thead><tr><th>Job</th><th>Next tick</th><th>Last run</th><th>Outcome</th><th class=\"num\">Took</th>")
                .append("<th class=\"num\">Fence</th><th>Last ran</th><th class=\"num\">Ran</th><th class=\"num\">Failed</th>")
                .append("<th class=\"num\">Lease lost</th><th class=\"num\">Skipped busy</th>")
                .append("<th class=\"num\">Store down</th></tr></thead><tbody>");
        for (Map.Entry<String, JobHistory.@Nullable JobStats> e : jobs.entrySet()) {
            b.append("<tr><td class=\"name\">").append(Html.text(e.getKey())).append("</td><td>")
                    .append(nextTick(nextTicks.get(e.getKey()), now)).append("</td>");
            JobHistory.JobStats j = e.getValue();
            if (j == null) {
                b.append("<td colspan=\"10\" class=\"muted\">not run yet</td></tr>");
                continue;
            }
            JobRunReport last = j.last();
            JobRunReport ran = j.lastRan();
            b.append("<td>").append(Html.time(last.startedAt()))
                    .append("</td><td>").append(outcome(last)).append("</td><td class=\"num\">").append(Html.duration(last.took()))
                    .append("</td><td class=\"num\">").append(last.fence() >= 0 ? Long.toString(last.fence()) : "")
                    .append("</td><td>").append(ran == null ? "never" : Html.time(ran.startedAt()) + " (" + outcome(ran) + ")")
                    .append("</td><td class=\"num\">").append(j.runs()).append("</td><td class=\"num\">").append(j.failures())
                    .append("</td><td class=\"num\">").append(j.leasesLost()).append("</td><td class=\"num\">").append(j.skippedBusy())
                    .append("</td><td class=\"num\">").append(j.skippedStoreUnavailable()).append("</td></tr>");
        }
        return b.append("</tbody></table></div>").toString();
    }

    /** The next tick and how far off it is; a tick due or running shows as such. */
    private static String nextTick(@Nullable Instant at, Instant now) {
        if (at == null) {
            return "<span class=\"muted\">not known</span>";
        }
        return at.isAfter(now) ? Html.time(at) + " (in " + Html.duration(java.time.Duration.between(now, at)) + ")"
                : "due or running";
    }

    private static String outcome(JobRunReport r) {
        if (r.status() == JobResult.Status.SKIPPED_BUSY) {
            return "skipped: held elsewhere";
        }
        if (r.status() == JobResult.Status.SKIPPED_STORE_UNAVAILABLE) {
            return "<span class=\"bad\">skipped: store unavailable</span>";
        }
        String failure = r.failure();
        if (failure != null) {
            return "<span class=\"bad\" title=\"" + Html.text(failure) + "\">failed: " + Html.text(shorten(failure)) + "</span>";
        }
        return r.leaseLost() ? "<span class=\"bad\">ran, lease lost</span>" : "ran";
    }

    private static String shorten(String s) {
        return s.length() > 120 ? s.substring(0, 119) + "…" : s;
    }
}
