package dev.turnstile.console;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.jspecify.annotations.Nullable;

/**
 * The audit record of one forced release: what was freed, whose holding it cut, who asked, from
 * where and when. The console logs its {@link #line()} at WARN (logger {@code
 * dev.turnstile.console.audit}), keeps it in its history, and hands it to the server's audit
 * listener; {@code turnstile release --force} writes the same line.
 *
 * @param name the lock name; for a claim, the task's key
 * @param freed whether a held lease (or claim) was ended ({@code false}: it was not held any more, or the task changed)
 * @param holder who held it, or {@code null} if it was not held (always null for a claim: a task table names no holder)
 * @param fence the fence that was cut, or {@code -1} if it was not held; for a claim, the claim version released
 * @param user who asked ({@code "anonymous"} if the server authenticated nobody)
 * @param from where the request came from (a client address, or a host and process)
 * @param via what was used: {@code console}, {@code release --force}
 * @param at when, by this process's clock
 * @param store the store: the console names it by kind only, {@code release --force} by its URL with secrets masked
 * @param claimTable for the release of a stuck claim, the task table (then {@code name} is the task's key, {@code fence}
 *     the claim version that was cut and {@code holder} null); {@code null} for a lock
 */
public record ReleaseRecord(String name, boolean freed, @Nullable String holder, long fence, String user, String from,
        String via, Instant at, String store, @Nullable String claimTable) {

    /**
     * The record of a forced release of a lock.
     *
     * @param name the lock name
     * @param freed whether a held lease was ended
     * @param holder who held it, or {@code null}
     * @param fence the fence that was cut, or {@code -1}
     * @param user who asked
     * @param from where the request came from
     * @param via what was used
     * @param at when
     * @param store the store
     */
    public ReleaseRecord(String name, boolean freed, @Nullable String holder, long fence, String user, String from,
            String via, Instant at, String store) {
        this(name, freed, holder, fence, user, from, via, at, store, null);
    }

    /**
     * One line for logs, stderr and syslog. The name, the holder and the user come from outside
     * (lock names and owner identities are anyone's input): each is quoted, with a quote inside
     * escaped as {@code \'} and control and invisible characters as {@link Printable} shows them,
     * so the line stays one line and none of them can write the rest of it.
     *
     * @return e.g. {@code console: lock 'nightly' freed (held by 'app@h1:7:x', fence 42) by user 'ops'
     *     from 10.0.0.5 at 2026-11-27T10:00:00Z on PostgreSQL}
     */
    public String line() {
        if (claimTable != null) {
            return via + ": claim on task '" + quoted(name) + "' of table '" + quoted(claimTable) + "' "
                    + (freed ? "released (claim version " + fence + " cut)" : "was not released (it changed)")
                    + " by user '" + quoted(user) + "'"
                    + " from " + Printable.of(from) + " at " + at.truncatedTo(ChronoUnit.MILLIS) + " on " + store;
        }
        return via + ": lock '" + quoted(name) + "' " + (freed ? "freed" : "was not held")
                + (holder != null ? " (held by '" + quoted(holder) + "', fence " + fence + ")" : "")
                + " by user '" + quoted(user) + "'"
                + " from " + Printable.of(from) + " at " + at.truncatedTo(ChronoUnit.MILLIS) + " on " + store;
    }

    /** Inside the quotes, a quote is escaped too: a value cannot end the quote and write the rest of the line. */
    private static String quoted(String s) {
        return Printable.of(s).replace("'", "\\'");
    }
}
