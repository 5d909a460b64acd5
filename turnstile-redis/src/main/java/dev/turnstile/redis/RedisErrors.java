package dev.turnstile.redis;

import dev.turnstile.StoreUnavailableException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a Lettuce failure means to the user: the driver's exceptions read in words that name the
 * fix (a wrong password, a refused port, a Sentinel that is not one, TLS against a plain server),
 * for every Redis store and the URL factory.
 */
final class RedisErrors {
    private static final Logger log = LoggerFactory.getLogger(RedisErrors.class);

    private RedisErrors() {
    }

    /**
     * The store's failure: {@code what} (say "cannot acquire lock 'x' on redis://…"), the cause
     * in words if it is known, and every message down the chain that adds something (the driver's
     * "Unable to connect" wraps the server's or the OS's words, "WRONGPASS …", "Connection refused",
     * and the fast-fail of a recent failed connect wraps that in turn).
     */
    static StoreUnavailableException unavailable(String what, RedisException e, boolean tls) {
        String detail = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        for (Throwable t : chain(e)) {
            if (t != e && t.getMessage() != null && !detail.contains(t.getMessage())) {
                detail += ": " + t.getMessage();
            }
        }
        String cause = cause(e, tls);
        return new StoreUnavailableException(what + ": " + (cause != null ? cause + " (" + detail + ")" : detail), e);
    }

    /** The exception, its causes and what they suppressed (Lettuce keeps each Sentinel's failure there), in that order. */
    static List<Throwable> chain(Throwable e) {
        List<Throwable> out = new ArrayList<>();
        java.util.ArrayDeque<Throwable> todo = new java.util.ArrayDeque<>();
        todo.add(e);
        while (!todo.isEmpty() && out.size() < 32) {
            Throwable t = todo.poll();
            if (out.stream().anyMatch(x -> x == t)) {
                continue;
            }
            out.add(t);
            if (t.getCause() != null) {
                todo.add(t.getCause());
            }
            todo.addAll(List.of(t.getSuppressed()));
        }
        return out;
    }

    /**
     * What the user should fix, for the driver's failures that all begin "Unable to connect": the
     * cause first, in words, with the driver's text after it. Read from the exceptions' types and
     * from the server's own error text, never from a message that quotes the host or the URL (a
     * host named {@code noauth-cache} is not a failed login). Null when the failure is none of those.
     */
    static @Nullable String cause(Throwable e) {
        return cause(e, false);
    }

    /** As {@link #cause(Throwable)}, for a connection that asked for TLS or not. */
    static @Nullable String cause(Throwable e, boolean tls) {
        List<Throwable> chain = chain(e);
        for (Throwable t : chain) {
            if (t instanceof RedisCommandExecutionException) {
                // The server's reply: "<CODE> text", with no host in it.
                String reply = String.valueOf(t.getMessage()).toUpperCase(java.util.Locale.ROOT);
                if (reply.startsWith("ERR DB INDEX IS OUT OF RANGE")) {
                    return "that database number does not exist on the server (it has 16 by default: /0 to /15 in the URL)";
                }
                if (reply.startsWith("WRONGPASS") || reply.startsWith("NOAUTH") || reply.startsWith("ERR INVALID PASSWORD")
                        || reply.startsWith("ERR INVALID USERNAME")) {
                    return "authentication failed: check the user and password in the URL";
                }
                if (reply.startsWith("NOPERM") && reply.contains("'INFO'")) {
                    return "the Redis user may not run INFO, which turnstile.replicaAcks=auto (the default) uses to count the "
                            + "master's replicas: grant it (ACL SETUSER <user> +info), or set turnstile.replicaAcks to a count "
                            + "(0: do not wait for replicas)";
                }
            }
        }
        // Lettuce's wrapper of a failed Sentinel connect; its text names the Sentinel after this start.
        boolean sentinel = chain.stream().anyMatch(t -> t instanceof RedisConnectionException
                && String.valueOf(t.getMessage()).startsWith("Cannot connect Redis Sentinel"));
        if (has(chain, java.net.UnknownHostException.class)) {
            return "unknown host: check the host name";
        }
        if (has(chain, io.netty.channel.ConnectTimeoutException.class)) { // a ConnectException: ask first
            return "no answer to the connection attempt within turnstile.connectTimeout: a firewall drops it, or the host "
                    + "is down (check the host and port)";
        }
        if (has(chain, java.net.ConnectException.class)) {
            return sentinel ? "connection refused: is a Sentinel running at that host and port (26379 by default)?"
                    : "connection refused: is Redis running at that host and port?";
        }
        if (tls) {
            // A plain Redis answers a TLS hello with an error, or not at all; either way the
            // handshake stalls until the timeout or ends in a TLS error.
            if (has(chain, javax.net.ssl.SSLException.class) && !has(chain, io.netty.handler.ssl.SslHandshakeTimeoutException.class)
                    && !has(chain, io.netty.handler.ssl.NotSslRecordException.class)) {
                return "the TLS handshake failed: check that this JVM trusts the server's certificate and that it names the "
                        + "host in the URL";
            }
            if (has(chain, javax.net.ssl.SSLException.class) || has(chain, io.netty.handler.ssl.NotSslRecordException.class)
                    || has(chain, RedisCommandTimeoutException.class)) {
                return "no TLS handshake within turnstile.connectTimeout: is the server a plain Redis without TLS? Then use "
                        + "redis://, not rediss://";
            }
        }
        for (Throwable t : chain) {
            String m = String.valueOf(t.getMessage());
            if (t instanceof io.lettuce.core.protocol.RedisProtocolException) {
                return "the server answered something other than Redis: not a Redis server (wrong port?)";
            }
            // Lettuce's own texts, which quote no host.
            if (t instanceof RedisCommandTimeoutException && m.startsWith("Cannot obtain master using SENTINEL MASTER")) {
                return "no Sentinel answered SENTINEL MASTER: is that address a Sentinel (port 26379 by default) rather than a "
                        + "Redis server, and is the master name after '#' right?";
            }
            if ((t instanceof RedisConnectionException && m.equals("Connection closed prematurely"))
                    || (t instanceof java.io.IOException && m.startsWith("Connection reset"))) {
                return "the server closed the connection without a Redis answer: not a Redis server (wrong port?)";
            }
            if (t instanceof RedisCommandTimeoutException && m.startsWith("Connection initialization timed out") && sentinel) {
                return "the Sentinel accepted the connection but did not answer within turnstile.connectTimeout: is that "
                        + "address a Sentinel (port 26379 by default), and not overloaded?";
            }
            if (t instanceof RedisCommandTimeoutException && m.startsWith("Connection initialization timed out")) {
                return "the server accepted the connection but did not answer within turnstile.connectTimeout: not a Redis server, "
                        + "or overloaded";
            }
        }
        return null;
    }

    private static boolean has(List<Throwable> chain, Class<? extends Throwable> type) {
        return chain.stream().anyMatch(type::isInstance);
    }


    /**
     * Whether the server lets {@code user} in with any password: Redis 6 and later accept AUTH
     * with any password for a user marked {@code nopass} (the default user of a server without a
     * password), so a password in the URL proves nothing there. Asked with {@code ACL GETUSER},
     * which changes nothing and logs no failed login; a server that refuses the question (no ACL
     * permission, Redis before 6) is taken to check passwords. The store asks only about the
     * {@code default} user: a refused question is itself an ACL LOG entry.
     */
    static boolean acceptsAnyPassword(RedisClusterCommands<String, String> redis, String user) {
        List<Object> reply;
        try {
            reply = redis.aclGetuser(user);
        } catch (RedisException e) {
            log.debug("cannot ask whether user '{}' has a password: {}", user, e.toString());
            return false;
        }
        if (reply == null) {
            return false;
        }
        for (int i = 0; i + 1 < reply.size(); i += 2) {
            if ("flags".equals(String.valueOf(reply.get(i))) && reply.get(i + 1) instanceof List<?> flags) {
                return flags.stream().anyMatch(f -> "nopass".equals(String.valueOf(f)));
            }
        }
        return false;
    }
}
