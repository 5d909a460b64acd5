package dev.turnstile.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

/**
 * The Redis store's Lua scripts, read once from {@code dev/turnstile/redis/lua/*.lua} beside this
 * class: each file says what its KEYS and ARGV are and what it returns. A line
 * {@code --#include other.lua} stands for that file's text; comment lines are left out of what is
 * sent to the server.
 *
 * <p>A lock is one string, readable as it is,
 * {@code token=<token> fence=<n> acquired_at=<ms> expires_at=<ms> owner=<owner>}, with a PX TTL.
 * Every {@code redis.call}, argument, reply element and number turned into text inside a script
 * costs server time, and on a busy server that time is every client's: so the client writes the
 * text before the fence and after the times (token, owner), the script formats the fence and the
 * times in one {@code string.format} (the times are the server's TIME, which the acquire reads for
 * the fence floor anyway: lockAtLeastFor is counted from acquired_at, so no client clock may write
 * it; expiry is the PX TTL, on the server's clock), and the common paths keep to INCR and
 * SET NX PX to acquire, GET, DEL and PUBLISH to release. Redis 5 and later replicate a script's
 * effects, not the script, so reading TIME before a write is allowed (7.0 knows no other way).
 *
 * <p>The benchmark's script-cost tool runs the same text: {@code java -cp … RedisScripts acquire}
 * prints it.
 */
final class RedisScripts {
    /** Takes a lock, or queues a waiter; returns the fence or 0. */
    static final String ACQUIRE = load("acquire");
    /** Extends a held lock; returns 1 or 0. */
    static final String EXTEND = load("extend");
    /** Releases a held lock and wakes the next waiter; returns 1 or 0. */
    static final String RELEASE = load("release");
    /** Releases, or keeps the lock until lockAtLeastFor after its acquire; returns {@link #KEPT}, 1 or 0. */
    static final String RELEASE_AT_LEAST = load("release-at-least");
    /** Ends a lease and gives the lock to a waiter of the same client; returns its fence, -1 or 0. */
    static final String HAND_OVER = load("hand-over");
    /** Ends whatever lease holds the lock; returns 1 or 0. */
    static final String FORCE_RELEASE = load("force-release");

    /** Deletes the fence counter of a free lock unused for a period; returns 1 or 0. See {@code prune.lua}. */
    static final String PRUNE = load("prune");

    /** A write applied only if its fence is at least the one recorded beside the key; see {@code RedisFences}. */
    static final String FENCED_WRITE = load("fenced-write");

    /** What {@link #RELEASE_AT_LEAST} returns when it kept the lock for lockAtLeastFor. */
    static final long KEPT = 2L;

    private static final String INCLUDE = "--#include ";

    private RedisScripts() {
    }

    /**
     * Prints a script as the store sends it, for tools that measure it on a server.
     *
     * @param args the script's name without {@code .lua}, e.g. {@code acquire}
     */
    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: RedisScripts acquire|extend|release|release-at-least|hand-over|force-release|fenced-write");
            System.exit(64);
        }
        System.out.print(load(args[0]));
    }

    /** The script {@code name}.lua with its includes in place and its comment lines left out. */
    static String load(String name) {
        StringBuilder out = new StringBuilder();
        append(name + ".lua", out, new HashSet<>());
        return out.toString();
    }

    private static void append(String file, StringBuilder out, Set<String> including) {
        if (!including.add(file)) {
            throw new IllegalStateException("Lua include cycle at " + file);
        }
        for (String line : read(file).split("\n", -1)) {
            String trimmed = line.strip();
            if (trimmed.startsWith(INCLUDE)) {
                append(trimmed.substring(INCLUDE.length()).strip(), out, including);
            } else if (!trimmed.isEmpty() && !trimmed.startsWith("--")) {
                out.append(line).append('\n');
            }
        }
        including.remove(file);
    }

    private static String read(String file) {
        try (InputStream in = RedisScripts.class.getResourceAsStream("lua/" + file)) {
            if (in == null) {
                throw new IllegalStateException("the Lua script " + file + " is missing from the turnstile-redis jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the Lua script " + file, e);
        }
    }
}
