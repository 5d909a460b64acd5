package dev.turnstile.redis;

import dev.turnstile.FenceGate;
import dev.turnstile.StaleFenceException;
import dev.turnstile.StoreUnavailableException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisScriptingCommands;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Fenced writes on Redis (standalone, Sentinel, Cluster): a {@code SET} or {@code HSET} that
 * applies only if its fence is at least the highest fence recorded for the key, and records the
 * fence, in one Lua script, so a holder whose lease was superseded cannot overwrite a newer holder's
 * value. A refused write throws {@link StaleFenceException} and writes nothing.
 *
 * <p>The fence is kept in a companion key in the same hash slot: {@link #fenceKey(String)}. It has
 * no TTL (a fence must only grow); delete it together with the data key when the data goes for good.
 * A key holding something other than a fence, or a hash key holding another type, is an
 * {@link IllegalStateException} and nothing is written: the script checks before its first write.
 *
 * <p>Over your Lettuce connection: {@code RedisFences.over(connection.sync())}, or a cluster
 * connection's {@code sync()}. With another client (Jedis, Spring's {@code RedisTemplate}), run
 * {@link #script()} with {@code EVAL}: its header says what the keys and arguments are.
 *
 * <p>What it guarantees: the compare, the record and the write are one atomic step on the server.
 * After a failover to a replica that had not received the last writes, the recorded fence goes back
 * with the data it guarded (both are lost together), so a stale holder can then write once more over
 * the older data; Redlock's fences may repeat (see the Redis store's documentation), so there two
 * holders may carry the same fence and both be admitted.
 *
 * <p>Instances are thread-safe if the commands object is (Lettuce's are).
 */
public final class RedisFences {
    /** Follows a key without a hash tag, wrapped in braces, to name its fence key. */
    public static final String FENCE_KEY_SUFFIX = ":turnstile-fence";
    /** Goes before a key with a hash tag to name its fence key. */
    public static final String FENCE_KEY_PREFIX = "turnstile-fence:";

    private final RedisScriptingCommands<String, String> redis;
    private final String digest;

    private RedisFences(RedisScriptingCommands<String, String> redis) {
        this.redis = redis;
        this.digest = redis.digest(RedisScripts.FENCED_WRITE);
    }

    /**
     * Returns the helper over a Lettuce synchronous commands object.
     *
     * @param commands a standalone, Sentinel or cluster connection's {@code sync()}, String keys and values
     * @return the helper
     * @throws IllegalArgumentException if {@code commands} is null
     */
    public static RedisFences over(RedisScriptingCommands<String, String> commands) {
        if (commands == null) {
            throw new IllegalArgumentException("commands is null: pass connection.sync() of a Lettuce String connection");
        }
        return new RedisFences(commands);
    }

    /**
     * Returns the Lua script of a fenced write, for clients other than Lettuce. KEYS: the data key,
     * its fence key ({@link #fenceKey}). ARGV: the fence (positive, decimal, no leading zeros), then
     * {@code set} and the value, {@code hset} and the field and the value, or {@code admit}. Returns
     * {@code {0}} when applied, {@code {1, fence}} with the higher recorded fence when refused, or
     * {@code {2, 'fence' | 'type', what}} when the keys hold something it cannot judge or write
     * (nothing written).
     *
     * @return the script text
     */
    public static String script() {
        return RedisScripts.FENCED_WRITE;
    }

    /**
     * Returns the key that holds {@code key}'s fence, in the same hash slot of a cluster:
     * {@code "{" + key + "}:turnstile-fence"} for a key without a hash tag, and
     * {@code "turnstile-fence:" + key} for a key with one (whose tag then still decides the slot).
     * The two shapes never meet, and no data key may have either shape (fenced writes refuse such
     * keys), so a fence key is never written as data. A key with a {@code '}'} but no hash tag (as
     * {@code a{}b}) has no fence key in its slot: on a cluster its fenced writes fail with Redis's
     * CROSSSLOT error (never silently); give such a key a hash tag.
     *
     * @param key the data key
     * @return its fence key
     */
    public static String fenceKey(String key) {
        int open = key.indexOf('{');
        int close = open < 0 ? -1 : key.indexOf('}', open + 1);
        boolean tagged = close > open + 1;
        return tagged ? FENCE_KEY_PREFIX + key : "{" + key + "}" + FENCE_KEY_SUFFIX;
    }

    /** Whether a key has the shape of a fence key, and so may not be written as data. */
    static boolean looksLikeFenceKey(String key) {
        return key.startsWith(FENCE_KEY_PREFIX) || (key.startsWith("{") && key.endsWith("}" + FENCE_KEY_SUFFIX));
    }

    /**
     * Sets a string value if {@code fence} is at least the key's recorded fence.
     *
     * @param key the key
     * @param value the value
     * @param fence the writer's fence ({@code Lease.fence()})
     * @throws StaleFenceException if a higher fence is recorded; nothing was written
     * @throws IllegalArgumentException if an argument is null, the key is empty, or the fence is not positive
     * @throws StoreUnavailableException if Redis cannot be reached or refuses the script
     */
    public void set(String key, String value, long fence) {
        write(key, fence, "set", notNull("value", value));
    }

    /**
     * Sets a field of a hash if {@code fence} is at least the hash's recorded fence (one fence per
     * hash, not per field).
     *
     * @param key the hash's key
     * @param field the field
     * @param value the value
     * @param fence the writer's fence
     * @throws StaleFenceException if a higher fence is recorded; nothing was written
     * @throws IllegalArgumentException if an argument is null, the key is empty, or the fence is not positive
     * @throws StoreUnavailableException if Redis cannot be reached or refuses the script
     */
    public void hset(String key, String field, String value, long fence) {
        write(key, fence, "hset", notNull("field", field), notNull("value", value));
    }

    /**
     * Returns a gate that records and compares a resource's fence in Redis, then runs the work. Unlike
     * {@code SqlFences.gate}, it does not hold the resource while the work runs: a stale fence that
     * arrives after a newer one is refused, but work admitted just before a newer fence may still be
     * running when the newer work is admitted. Prefer {@link #set}/{@link #hset} where the work is a
     * Redis write.
     *
     * @return the gate
     */
    public FenceGate gate() {
        return new FenceGate() {
            @Override
            public <T, E extends Exception> T admit(String resource, long fence, Work<T, E> work) throws E {
                write(FenceGate.checkResource(resource), fence, "admit");
                return work.run();
            }

            @Override
            public String toString() {
                return "RedisFences.gate()";
            }
        };
    }

    private void write(String key, long fence, String op, String... args) {
        check("key", key);
        if (looksLikeFenceKey(key)) {
            throw new IllegalArgumentException("key '" + key + "' has the shape of a fence key ('{key}" + FENCE_KEY_SUFFIX
                    + "' or '" + FENCE_KEY_PREFIX + "…'), which holds another key's fence: writing it as data could lower "
                    + "that fence. Give the data another name");
        }
        FenceGate.checkFence(fence);
        String[] keys = {key, fenceKey(key)};
        String[] values = new String[2 + args.length];
        values[0] = Long.toString(fence);
        values[1] = op;
        System.arraycopy(args, 0, values, 2, args.length);
        List<Object> reply = run(keys, values);
        long outcome = reply.isEmpty() || !(reply.get(0) instanceof Long l) ? -1 : l;
        if (outcome == 0) {
            return;
        }
        if (outcome == 1 && reply.size() == 2) {
            throw new StaleFenceException(key, fence, parse(keys[1], String.valueOf(reply.get(1))));
        }
        if (outcome == 2 && reply.size() == 3 && "type".equals(String.valueOf(reply.get(1)))) {
            throw new IllegalStateException("the key '" + key + "' holds a " + reply.get(2) + ", not a hash: HSET cannot write "
                    + "it, and nothing was written (its fence neither)");
        }
        if (outcome == 2 && reply.size() == 3) {
            throw new IllegalStateException(garbage(keys[1], String.valueOf(reply.get(2))));
        }
        throw new IllegalStateException("the fenced-write script answered " + reply + ", which this version does not know");
    }

    private List<Object> run(String[] keys, String[] values) {
        try {
            try {
                return redis.evalsha(digest, ScriptOutputType.MULTI, keys, values);
            } catch (RedisNoScriptException e) {
                return redis.eval(RedisScripts.FENCED_WRITE, ScriptOutputType.MULTI, keys, values);
            }
        } catch (RedisCommandExecutionException e) {
            // The server ran the script and refused a call before its first write (WRONGTYPE on the
            // fence key): a definite answer, not an outage.
            throw new IllegalStateException("Redis refused the fenced write to '" + keys[0] + "': " + e.getMessage()
                    + "; nothing was written (is " + keys[1] + " a string, as a fence key must be?)", e);
        } catch (RedisException e) {
            throw new StoreUnavailableException("fenced write to '" + keys[0] + "' failed: " + e.getMessage()
                    + " (it may or may not have been applied if Redis answered nothing)", e);
        }
    }

    private static String garbage(String fenceKey, String seen) {
        return "the fence key '" + fenceKey + "' holds '" + seen + "', not a fence this client can judge (a positive whole "
                + "number below 2^63), so no fenced write to its key can be judged, and nothing was written: something else wrote it; delete it once no "
                + "holder of an older lease can still write";
    }

    private static long parse(String fenceKey, String seen) {
        try {
            return Long.parseLong(seen);
        } catch (NumberFormatException e) {
            throw new IllegalStateException(garbage(fenceKey, seen), e);
        }
    }

    private static String notNull(String what, String value) {
        if (value == null) {
            throw new IllegalArgumentException(what + " is null: give a " + what + " (an empty string is allowed)");
        }
        return value;
    }

    private static String check(String what, String value) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException(what + " is " + (value == null ? "null" : "empty") + ": give a non-empty " + what);
        }
        return value;
    }

    @Override
    public String toString() {
        return "RedisFences";
    }
}
