package dev.turnstile.zookeeper;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * What a lock node holds, as JSON readable with {@code zkCli.sh get}. The times in it are for people
 * (the holder's wall clock); expiry is judged only from the node's {@link Stat} ({@code ctime} or
 * {@code mtime}, the ensemble's clock) plus {@code ttl_ms}, or from {@code until_ms} on a
 * {@code lockAtLeastFor} hold marker (itself a server time: the lease node's {@code ctime} plus the
 * minimum hold).
 *
 * <p>Any component may be null: each kind of node leaves some out, and a node's JSON (read back from
 * ZooKeeper, where anyone may have written it) need not carry any of them.
 *
 * @param owner the readable holder identity
 * @param token the ownership token
 * @param ttlMs the lease's time to live, counted from {@code from}
 * @param from {@code "mtime"} (acquire and extend: the last write) or {@code "ctime"}
 * @param acquiredAt when the lease was taken, ISO-8601, the holder's clock (for people)
 * @param expiresAt when the lease ends unless extended, ISO-8601, the holder's clock (for people)
 * @param fence on a hold marker, the fence of the lease it keeps
 * @param untilMs on a hold marker, the server time (epoch ms) until which the lock stays taken
 * @param acquiredAtMs the server time (epoch ms) the lease started: on a hold marker, and on a lease
 *     node rewritten by an extend; absent on the write that started the lease, whose {@code mtime}
 *     is that time
 * @param queued {@code true} on a waiter's place in line (not a lease: it holds nothing, but keeps
 *     the nodes behind it waiting until it expires, {@code ttl_ms} after its last write)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record NodeData(
        @JsonProperty("owner") @Nullable String owner,
        @JsonProperty("token") @Nullable String token,
        @JsonProperty("ttl_ms") @Nullable Long ttlMs,
        @JsonProperty("from") @Nullable String from,
        @JsonProperty("acquired_at") @Nullable String acquiredAt,
        @JsonProperty("expires_at") @Nullable String expiresAt,
        @JsonProperty("fence") @Nullable Long fence,
        @JsonProperty("until_ms") @Nullable Long untilMs,
        @JsonProperty("acquired_at_ms") @Nullable Long acquiredAtMs,
        @JsonProperty("queued") @Nullable Boolean queued) {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The data of the write that starts a lease (an acquire): the lease starts at its {@code mtime}. */
    static NodeData lease(String owner, String token, long ttlMs, String from, long clientNowMs) {
        return extended(owner, token, ttlMs, from, clientNowMs, null);
    }

    /** The data of an extend of a lease that started at {@code startedMs} (server time, epoch ms). */
    static NodeData extended(@Nullable String owner, String token, long ttlMs, String from, long clientNowMs,
            @Nullable Long startedMs) {
        return new NodeData(owner, token, ttlMs, from, java.time.Instant.ofEpochMilli(clientNowMs).toString(),
                java.time.Instant.ofEpochMilli(clientNowMs + ttlMs).toString(), null, null, startedMs, null);
    }

    /**
     * The server time (epoch ms) the lease of a node with this data and stat started: the acquiring
     * write's {@code mtime} (a node's creation, a place's promotion, or the write that made a node
     * the holder after others went), which an extend carries along in {@code acquired_at_ms}.
     */
    long leaseStartMs(Stat stat) {
        return acquiredAtMs != null ? acquiredAtMs : stat.getMtime();
    }

    /** A waiter's place in line: expires {@code queueTimeoutMs} after its last write unless touched. */
    static NodeData place(String owner, String token, long queueTimeoutMs) {
        return new NodeData(owner, token, queueTimeoutMs, "mtime", null, null, null, null, null, Boolean.TRUE);
    }

    /** Whether this is a waiter's place in line rather than a lease or a hold marker. */
    boolean isPlace() {
        return Boolean.TRUE.equals(queued);
    }

    static NodeData hold(NodeData lease, long fence, long acquiredAtMs, long untilMs) {
        return new NodeData(lease.owner, lease.token, null, null, java.time.Instant.ofEpochMilli(acquiredAtMs).toString(),
                java.time.Instant.ofEpochMilli(untilMs).toString(), fence, untilMs, acquiredAtMs, null);
    }

    /** The server time (epoch ms) at which a lease node with this data and stat expires. */
    long expiresAtMs(Stat stat) {
        if (untilMs != null) {
            return untilMs;
        }
        long base = "ctime".equals(from) ? stat.getCtime() : stat.getMtime();
        return base + (ttlMs == null ? 0 : ttlMs);
    }

    byte[] bytes() {
        try {
            return JSON.writeValueAsBytes(this);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write lock node data", e);
        }
    }

    /** Reads node data; a node that is not Turnstile's (unreadable) counts as held forever by nobody known. */
    static NodeData parse(byte @Nullable [] bytes) {
        if (bytes == null || bytes.length == 0) {
            return new NodeData("?", null, Long.MAX_VALUE / 4, "ctime", null, null, null, null, null, null);
        }
        try {
            return JSON.readValue(bytes, NodeData.class);
        } catch (IOException e) {
            return new NodeData("? (" + new String(bytes, StandardCharsets.UTF_8).replaceAll("\\p{Cntrl}", "?") + ")", null,
                    Long.MAX_VALUE / 4, "ctime", null, null, null, null, null, null);
        }
    }
}
