package dev.turnstile.console;

import dev.turnstile.LockInfo;
import dev.turnstile.leader.Leadership;
import dev.turnstile.leader.Term;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The leadership page: each role, who leads it now (its lock's holder, read from the store), the
 * term's fence and since when; and, for roles this application stands for, whether this instance
 * leads or stands by.
 */
final class LeadersPage {
    private LeadersPage() {}

    static String body(Collection<String> roles, Collection<Leadership> leaderships, List<LockInfo> held, Instant now) {
        Map<String, @Nullable Leadership> byRole = new TreeMap<>();
        roles.forEach(r -> byRole.put(r, null));
        leaderships.forEach(l -> byRole.put(l.role(), l));
        StringBuilder b = new StringBuilder(1024);
        b.append("<h1>Leadership</h1>");
        if (byRole.isEmpty()) {
            return b.append("<p class=\"summary\" id=\"leaders-none\">No roles are known to this console: an application's "
                    + "<code>Leadership</code> beans show here, and <code>turnstile console --role NAME</code> shows a role "
                    + "by its lock name.</p>").toString();
        }
        Map<String, LockInfo> locks = held.stream().filter(l -> byRole.containsKey(l.name()))
                .collect(Collectors.toMap(LockInfo::name, Function.identity(), (a, c) -> a));
        b.append("<div id=\"live\" data-refresh=\"5\"><p class=\"summary\">").append(LocksPage.count(byRole.size(), "role"))
                .append(". A term's fence grows with every new leader: a resource that checks it refuses a deposed one.</p>")
                .append("<table id=\"leaders\"><thead><tr><th>Role</th><th>Leader</th><th class=\"num\">Term (fence)</th>")
                .append("<th>Since</th><th class=\"num\">Lease left</th><th>This instance</th></tr></thead><tbody>");
        byRole.forEach((role, leadership) -> {
            LockInfo lock = locks.get(role);
            b.append("<tr><td class=\"name\">").append(Html.text(role)).append("</td>");
            if (lock == null) {
                b.append("<td class=\"bad\">none</td><td></td><td></td><td></td>");
            } else {
                b.append("<td>").append(Html.text(lock.owner())).append("</td><td class=\"num\">").append(lock.fence())
                        .append("</td><td>").append(Html.time(lock.acquiredAt())).append("</td><td class=\"num\">")
                        .append(Html.duration(java.time.Duration.between(now, lock.expiresAt()))).append("</td>");
            }
            b.append("<td>").append(leadership == null ? "" : self(leadership)).append("</td></tr>");
        });
        return b.append("</tbody></table></div>").toString();
    }

    private static String self(Leadership l) {
        Optional<Term> term = l.currentTerm();
        return l.isLeader() && term.isPresent() ? "leads (term " + term.get().fence() + ")" : "stands by";
    }
}
