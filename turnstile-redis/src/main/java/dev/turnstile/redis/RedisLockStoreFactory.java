package dev.turnstile.redis;

import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStoreFactory;
import dev.turnstile.spi.StoreUrlOptions;
import dev.turnstile.spi.StoreUrls;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Opens Redis stores from URLs:
 *
 * <ul>
 *   <li>{@code redis://[[user]:password@]host[:port][/db]} and {@code rediss://…} (TLS, with
 *       certificate and host name verification);
 *   <li>{@code redis-sentinel://[[user]:password@]host[:port][,host2[:port2]][/db]#masterName};
 *   <li>{@code redis-cluster://[[user]:password@]host:port[,host:port…]} (any reachable nodes; the
 *       rest of the cluster is discovered; Cluster has only database 0);
 *   <li>{@code redlock://[[user]:password@]host:port,host:port,host:port[…][/db]} (an odd number of
 *       at least 3 independent masters, each by one address only; the database, if given, is used
 *       on every node).
 * </ul>
 *
 * <p>A password with characters that have a meaning in URLs ({@code @ / : ? # %}) must be
 * percent-encoded ({@code %40 %2F %3A %3F %23 %25}). No message of this factory or of the stores
 * it opens contains the password or the user info.
 *
 * <p>Turnstile's options ride as query parameters: {@code turnstile.prefix} (key prefix, default
 * {@code turnstile:}), {@code turnstile.timeout} (command timeout, default 5 s),
 * {@code turnstile.connectTimeout} (how long connecting, TLS and the handshake may take together,
 * default the command timeout but at most 5 s: a server or Sentinel that accepts connections and
 * never answers is reported unavailable after this long), {@code turnstile.replicaAcks}
 * ({@code auto}, the default: wait for one replica when the master has any, which it reads with
 * {@code INFO replication}, so the user needs {@code +info}; or a count, {@code 0} for none; see
 * {@link RedisLockStore.Builder#replicaAcks(int)}), {@code turnstile.replicaAckTimeout} (default
 * 1 s, below the command timeout) and, for Redlock, {@code turnstile.nodeTimeout} (per-node
 * timeout, default 100 ms). Commands fail at once while the connection is down instead of
 * queueing, so a lock call never waits for a reconnect.
 */
public final class RedisLockStoreFactory implements LockStoreFactory {
    private static final Set<String> KNOWN = Set.of("prefix", "timeout", "connectTimeout", "nodeTimeout", "replicaAcks",
            "replicaAckTimeout");
    private static final Duration MAX_DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);

    @Override
    public List<String> schemes() {
        return List.of("redis://", "rediss://", "redis-sentinel://", "redis-cluster://", "redlock://");
    }

    @Override
    public LockStore open(String url) {
        Parsed p = parse(url);
        checkPorts(p);
        Duration timeout = p.options.duration("timeout", Duration.ofSeconds(5));
        Duration connectTimeout = p.options.duration("connectTimeout",
                timeout.compareTo(MAX_DEFAULT_CONNECT_TIMEOUT) < 0 ? timeout : MAX_DEFAULT_CONNECT_TIMEOUT);
        String scheme = p.url.substring(0, p.url.indexOf("://")).toLowerCase(Locale.ROOT);
        Integer acks = replicaAcks(p);
        Duration ackTimeout = p.options.options().containsKey("replicaAckTimeout") // else chosen below or by the store
                ? p.options.duration("replicaAckTimeout", ReplicaAcks.DEFAULT_TIMEOUT) : null;
        if (ackTimeout == null && timeout.compareTo(Duration.ofSeconds(1)) <= 0) {
            ackTimeout = timeout.dividedBy(2); // the default 1 s would outlast the command timeout
        }
        if (ackTimeout != null && ackTimeout.compareTo(timeout) >= 0) {
            throw new IllegalArgumentException("turnstile.replicaAckTimeout (" + ackTimeout.toMillis() + " ms) must be below the "
                    + "command timeout turnstile.timeout (" + timeout.toMillis() + " ms) in store URL '" + safe(p.url) + "'");
        }
        if (scheme.equals("redlock") && (acks != null || p.options.options().containsKey("replicaAckTimeout"))) {
            throw new IllegalArgumentException("turnstile.replicaAcks and turnstile.replicaAckTimeout do not apply to Redlock "
                    + "(its nodes are independent masters) in store URL '" + safe(p.url) + "'");
        }
        ClientResources resources = DefaultClientResources.builder().ioThreadPoolSize(2).computationThreadPoolSize(2).build();
        List<AutoCloseable> made = new ArrayList<>();
        try {
            switch (scheme) {
                case "redis-cluster" -> {
                    if (database(p) != 0) {
                        throw new IllegalArgumentException("Redis Cluster has only database 0; drop '/" + database(p)
                                + "' from store URL '" + safe(p.url) + "'");
                    }
                    List<RedisURI> seeds = new ArrayList<>();
                    for (String host : hosts(p)) {
                        seeds.add(uri("redis://" + p.userInfo + host, connectTimeout, p.url));
                    }
                    RedisClusterClient client = RedisClusterClient.create(resources, seeds);
                    made.add(client::shutdown);
                    client.setOptions(ClusterClientOptions.builder().disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                            .timeoutOptions(TimeoutOptions.enabled(timeout)).socketOptions(socket(connectTimeout))
                            .sslOptions(ssl(connectTimeout)).build());
                    return store(RedisLockStore.builder(client), p, acks, ackTimeout, client, resources);
                }
                case "redlock" -> {
                    Duration nodeTimeout = p.options.duration("nodeTimeout", RedlockLockStore.DEFAULT_NODE_TIMEOUT);
                    List<String> hosts = hosts(p);
                    RedlockLockStore.checkNodeCount(hosts.size());
                    if (hosts.stream().distinct().count() != hosts.size()) {
                        throw new IllegalArgumentException("Redlock nodes must be distinct; '" + safe(url)
                                + "' names one node twice, which would fake a majority");
                    }
                    int db = database(p);
                    List<RedisLockStore> nodes = new ArrayList<>();
                    for (String host : hosts) {
                        RedisClient client = client(resources, uri("redis://" + p.userInfo + host + "/" + db, connectTimeout, p.url),
                                nodeTimeout, connectTimeout);
                        made.add(client::shutdown);
                        RedisLockStore.Builder nodeBuilder = RedisLockStore.builder(client).keyPrefix(p.options.get("prefix", "turnstile:"))
                                .description("redis://" + host + (db != 0 ? "/" + db : "")).replicaAcks(0).owning(client);
                        passwordUser(p.userInfo).ifPresent(nodeBuilder::passwordGiven);
                        RedisLockStore node = nodeBuilder.build();
                        nodes.add(node);
                        made.add(node);
                    }
                    return RedlockLockStore.builder(nodes).nodeTimeout(nodeTimeout).alsoClosing(() -> shutDown(resources)).build();
                }
                default -> {
                    RedisClient client = client(resources, uri(p.url, connectTimeout, p.url), timeout, connectTimeout);
                    made.add(client::shutdown);
                    return store(RedisLockStore.builder(client), p, acks, ackTimeout, client, resources);
                }
            }
        } catch (RuntimeException e) {
            // Refused (bad option, a Redlock node named twice): no client, thread or connection may outlive the refusal.
            for (int i = made.size() - 1; i >= 0; i--) {
                try {
                    made.get(i).close();
                } catch (Exception ignored) {
                    // best effort
                }
            }
            shutDown(resources);
            throw e;
        }
    }

    /** {@code turnstile.replicaAcks}: null for auto (the default), else the count. */
    private static @Nullable Integer replicaAcks(Parsed p) {
        String v = p.options.get("replicaAcks", "auto");
        if (v.equalsIgnoreCase("auto")) {
            return null;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= 0 && n <= 100) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException("turnstile.replicaAcks must be 'auto' or a count 0-100, not '" + v + "', in store URL '"
                + safe(p.url) + "'");
    }

    private static RedisLockStore store(RedisLockStore.Builder b, Parsed p, @Nullable Integer acks, @Nullable Duration ackTimeout, AutoCloseable client,
            ClientResources resources) {
        String prefix = p.options.options().get("prefix");
        if (prefix != null) {
            b.keyPrefix(prefix);
        }
        if (acks != null) {
            b.replicaAcks(acks);
        }
        if (ackTimeout != null) {
            b.replicaAckTimeout(ackTimeout);
        }
        passwordUser(p.userInfo).ifPresent(b::passwordGiven);
        if (p.url.regionMatches(true, 0, "rediss://", 0, 9)) {
            b.tls();
        }
        return b.description(safe(p.url)).owning(client).owning(() -> shutDown(resources)).build();
    }

    /**
     * The TCP connect ends a little before the handshake's timer (the URI's timeout, which starts
     * with the channel): when both end together, the handshake's timer may close the channel first,
     * and a firewalled port is then reported as a bare ClosedChannelException instead of the
     * connect timeout that names it.
     */
    private static SocketOptions socket(Duration connectTimeout) {
        long margin = Math.min(100, connectTimeout.toMillis() / 10);
        return SocketOptions.builder().connectTimeout(connectTimeout.minusMillis(margin)).build();
    }

    private static SslOptions ssl(Duration connectTimeout) {
        return SslOptions.builder().handshakeTimeout(connectTimeout).build();
    }

    private static RedisClient client(ClientResources resources, RedisURI uri, Duration timeout, Duration connectTimeout) {
        RedisClient client = RedisClient.create(resources, uri);
        client.setOptions(ClientOptions.builder().disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(timeout)).socketOptions(socket(connectTimeout)).sslOptions(ssl(connectTimeout))
                .build());
        return client;
    }

    /**
     * A Lettuce URI whose own timeout is the connect timeout: Lettuce bounds the handshake by it
     * (commands are bounded by the client's {@link TimeoutOptions} instead).
     */
    private static RedisURI uri(String url, Duration connectTimeout, String original) {
        RedisURI uri;
        try {
            uri = RedisURI.create(url);
        } catch (RuntimeException e) {
            // Lettuce's message quotes the URL, password and all: say what is wrong without it.
            throw new IllegalArgumentException("malformed Redis URL '" + safe(original) + "'; expected "
                    + "redis://[user:password@]host[:port][/db], with @ / : ? # % in the password written as %40 %2F %3A %3F %23 %25");
        }
        if (uri.getHost() == null && uri.getSentinels().isEmpty() && uri.getSocket() == null) {
            throw new IllegalArgumentException("Redis URL '" + safe(original) + "' has no host");
        }
        uri.setTimeout(connectTimeout);
        // Each Sentinel's URI has a timeout of its own (Lettuce's default, 60 s), which bounds the
        // handshake with that Sentinel: a Sentinel address that accepts and never answers would
        // cost a minute, whatever turnstile.connectTimeout says.
        uri.getSentinels().forEach(s -> s.setTimeout(connectTimeout));
        return uri;
    }

    /**
     * The URL for messages: whatever precedes the last {@code @} is user info and is hidden, even
     * when a password with unencoded {@code / ? #} would fool a URL parser; then the generic
     * redaction of password parameters.
     */
    static String safe(String url) {
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');
        String s = scheme >= 0 && at > scheme ? url.substring(0, scheme + 3) + "***@" + url.substring(at + 1) : url;
        return StoreUrls.redact(s);
    }

    private record Parsed(String url, String userInfo, StoreUrlOptions options) {}

    /**
     * The user whose password the URL gives ({@code default} when it names none), if it gives one:
     * {@code user:password@}, {@code :password@} or {@code password@}.
     */
    static Optional<String> passwordUser(String userInfo) {
        if (userInfo.isEmpty()) {
            return Optional.empty();
        }
        String info = userInfo.substring(0, userInfo.length() - 1);
        int colon = info.indexOf(':');
        String user = colon < 0 ? "" : info.substring(0, colon);
        String password = colon < 0 ? info : info.substring(colon + 1);
        if (password.isEmpty()) {
            return Optional.empty();
        }
        try {
            user = URLDecoder.decode(user.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return Optional.empty(); // a bad escape is refused when the URL is parsed
        }
        return Optional.of(user.isEmpty() ? "default" : user);
    }

    private static Parsed parse(String url) {
        StoreUrlOptions options;
        try {
            options = StoreUrlOptions.parse(url, KNOWN, false);
        } catch (IllegalArgumentException e) {
            // Its message quotes the URL through the generic redaction, which a password with
            // unencoded / ? # can get past: quote it our way.
            throw new IllegalArgumentException(String.valueOf(e.getMessage()).replace(StoreUrls.redact(url), safe(url)));
        }
        String clean = options.url();
        String afterScheme = clean.substring(clean.indexOf("://") + 3);
        // The user info ends at the last '@' (a password may hold unencoded / ? #, which no host has).
        int at = afterScheme.lastIndexOf('@');
        return new Parsed(clean, at >= 0 ? afterScheme.substring(0, at + 1) : "", options);
    }

    /** Shuts the store's own client resources down, without waiting: nothing is left that uses them. */
    @SuppressWarnings("FutureReturnValueIgnored")
    private static void shutDown(ClientResources resources) {
        resources.shutdown();
    }

    private static int firstOf(String s, String chars) {
        int best = s.length();
        for (int k = 0; k < chars.length(); k++) {
            int i = s.indexOf(chars.charAt(k));
            if (i >= 0 && i < best) {
                best = i;
            }
        }
        return best;
    }

    /** The part after the user info: {@code host:port,host:port[/db][?…][#…]}. */
    private static String afterUserInfo(Parsed p) {
        return p.url.substring(p.url.indexOf("://") + 3 + p.userInfo.length());
    }

    /** The database number of a cluster or Redlock URL ({@code /db} after the hosts), 0 if none. */
    private static int database(Parsed p) {
        String s = afterUserInfo(p);
        int slash = s.indexOf('/');
        int end = firstOf(s, "?#");
        if (slash < 0 || slash > end) {
            return 0;
        }
        String db = s.substring(slash + 1, end);
        if (db.isEmpty()) {
            return 0;
        }
        if (!db.matches("\\d{1,5}")) {
            throw new IllegalArgumentException("'/" + db + "' in store URL '" + safe(p.url) + "' is not a database number");
        }
        return Integer.parseInt(db);
    }

    /**
     * Refuses a port that is not 1-65535 in ASCII digits, in every URL form. Lettuce reads an
     * empty port ({@code host:}, what {@code host:${PORT}} becomes with PORT unset) and
     * {@code :0} as "the default, 6379", so such a URL would reach whatever listens there; and it
     * reports {@code :+6379} or non-ASCII digits as a bad IPv6 literal.
     */
    private static void checkPorts(Parsed p) {
        String s = afterUserInfo(p);
        for (String h : s.substring(0, firstOf(s, "/?#")).split(",", -1)) {
            String port;
            if (h.startsWith("[")) {
                int close = h.indexOf(']');
                if (close < 0 || !h.startsWith(":", close + 1)) {
                    continue; // no port; a bad literal is refused where the host is read
                }
                port = h.substring(close + 2);
            } else if (h.indexOf(':') >= 0 && h.indexOf(':') == h.lastIndexOf(':')) {
                port = h.substring(h.indexOf(':') + 1);
            } else {
                continue; // no port, or an unbracketed IPv6 address, which the driver refuses
            }
            if (port.isEmpty()) {
                throw new IllegalArgumentException("the port after '" + h + "' in store URL '" + safe(p.url) + "' is empty "
                        + "(an unset variable?): give the port, 1-65535, or leave out the ':' for 6379");
            }
            if (!port.matches("[0-9]{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
                throw new IllegalArgumentException("port '" + port + "' in store URL '" + safe(p.url) + "' is not a port: "
                        + "give 1-65535 in the digits 0-9");
            }
        }
    }

    /** The comma-separated host:port list of a cluster or Redlock URL. */
    private static List<String> hosts(Parsed p) {
        String s = afterUserInfo(p);
        int end = firstOf(s, "/?#");
        List<String> hosts = new ArrayList<>();
        for (String h : s.substring(0, end).split(",", -1)) {
            if (!h.matches("[A-Za-z0-9._\\-]+(:\\d{1,5})?|\\[[0-9a-fA-F:]+\\](:\\d{1,5})?")) {
                throw new IllegalArgumentException("'" + h + "' in store URL '" + safe(p.url)
                        + "' is not host[:port]; list the nodes as host:port,host:port,…");
            }
            String withPort = h.matches(".*:\\d{1,5}$") && !h.endsWith("]") ? h : h + ":6379";
            int port = Integer.parseInt(withPort.substring(withPort.lastIndexOf(':') + 1));
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port " + port + " in store URL '" + safe(p.url) + "' is not 1-65535");
            }
            hosts.add(withPort);
        }
        return hosts;
    }
}
