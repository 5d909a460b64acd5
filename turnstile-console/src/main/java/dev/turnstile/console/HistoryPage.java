package dev.turnstile.console;

import java.util.List;

/** The forced releases made through this console, newest first. */
final class HistoryPage {
    private HistoryPage() {}

    static String body(List<ReleaseRecord> records, int size) {
        StringBuilder b = new StringBuilder(512 + records.size() * 300);
        b.append("<h1>Forced releases</h1><p class=\"summary\">Made through this console since it started (the last ")
                .append(size).append(" are kept here; the log, logger <code>dev.turnstile.console.audit</code>, keeps all).</p>");
        if (records.isEmpty()) {
            return b.append("<p id=\"history-empty\">None yet.</p>").toString();
        }
        b.append("<table id=\"history\"><thead><tr><th>When</th><th>Lock or claim</th><th>Outcome</th><th>Holder cut</th>")
                .append("<th class=\"num\">Fence or version cut</th><th>By</th><th>From</th></tr></thead><tbody>");
        for (ReleaseRecord r : records) {
            b.append("<tr><td>").append(Html.time(r.at())).append("</td><td class=\"name\">")
                    .append(r.claimTable() != null ? "task " + Html.text(r.name()) + " of table " + Html.text(r.claimTable())
                            : Html.text(r.name()))
                    .append("</td><td>").append(r.freed() ? "freed" : r.claimTable() != null ? "changed, not released" : "was not held").append("</td><td>")
                    .append(Html.text(r.holder())).append("</td><td class=\"num\">").append(r.freed() ? Long.toString(r.fence()) : "")
                    .append("</td><td>").append(Html.text(r.user())).append("</td><td>").append(Html.text(r.from()))
                    .append("</td></tr>");
        }
        return b.append("</tbody></table>").toString();
    }
}
