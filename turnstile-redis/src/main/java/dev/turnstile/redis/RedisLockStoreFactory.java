package dev.turnstile.redis;

import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStoreFactory;
import dev.turnstile.spi.StoreUrlOptions;
import dev.turnstile.spi.StoreUrls;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Opens Redis stores from URLs:
 *
 * <ul>
 *   <li>{@code redis://[[user]:password@]host[:port][/db]} and {@code rediss://…} (TLS, with
 *       certificate and host name verification);
 *   <li>{@code redis-sentinel://[[user]:password@]host[:port][,host2[:port2]][/db]#masterName};
 *   <li>{@code redis-cluster://[[user]:password@]host:port[,host:port…]} (any reachable nodes; the
 *       rest of the cluster is discovered);
 *   <li>{@code redlock://[[user]:password@]host:port,host:port,host:port[…]} (an odd number of at
 *       least 3 independent masters).
 * </ul>
 *
 * <p>Turnstile's options ride as query parameters: {@code turnstile.prefix} (key prefix, default
 * {@code turnstile:}), {@code turnstile.timeout} (command timeout, default 5 s) and, for Redlock,
 * {@code turnstile.nodeTimeout} (per-node timeout, default 100 ms). Commands fail at once while
 * the connection is down instead of queueing, so a lock call never waits for a reconnect.
 */
public final class RedisLockStoreFactory implements LockStoreFactory {
    private static final Set<String> KNOWN = Set.of("prefix", "timeout", "nodeTimeout");

    @Override
    public List<String> schemes() {
        return List.of("redis://", "rediss://", "redis-sentinel://", "redis-cluster://", "redlock://");
    }

    @Override
    public LockStore open(String url) {
        Parsed p = parse(url);
        Duration timeout = p.options.duration("timeout", Duration.ofSeconds(5));
        String scheme = p.url.substring(0, p.url.indexOf("://")).toLowerCase(Locale.ROOT);
        ClientResources resources = DefaultClientResources.builder().ioThreadPoolSize(2).computationThreadPoolSize(2).build();
        try {
            switch (scheme) {
                case "redis-cluster" -> {
                    List<RedisURI> seeds = new ArrayList<>();
                    for (String host : hosts(p)) {
                        seeds.add(uri("redis://" + p.userInfo + host, timeout));
                    }
                    RedisClusterClient client = RedisClusterClient.create(resources, seeds);
                    client.setOptions(ClusterClientOptions.builder().disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                            .timeoutOptions(TimeoutOptions.enabled(timeout)).build());
                    return store(RedisLockStore.builder(client), p, client, resources);
                }
                case "redlock" -> {
                    Duration nodeTimeout = p.options.duration("nodeTimeout", Duration.ofMillis(100));
                    List<String> hosts = hosts(p);
                    RedlockLockStore.checkNodeCount(hosts.size());
                    if (hosts.stream().distinct().count() != hosts.size()) {
                        throw new IllegalArgumentException("Redlock nodes must be distinct; '" + StoreUrls.redact(url)
                                + "' names one node twice, which would fake a majority");
                    }
                    List<RedisLockStore> nodes = new ArrayList<>();
                    for (String host : hosts) {
                        RedisClient client = client(resources, uri("redis://" + p.userInfo + host, nodeTimeout), nodeTimeout);
                        nodes.add(RedisLockStore.builder(client).keyPrefix(p.options.get("prefix", "turnstile:"))
                                .description("redis://" + host).owning(client).build());
                    }
                    return RedlockLockStore.of(nodes, nodeTimeout).alsoClosing(resources::shutdown);
                }
                default -> {
                    RedisClient client = client(resources, uri(p.url, timeout), timeout);
                    return store(RedisLockStore.builder(client), p, client, resources);
                }
            }
        } catch (RuntimeException e) {
            resources.shutdown();
            throw e;
        }
    }

    private static RedisLockStore store(RedisLockStore.Builder b, Parsed p, AutoCloseable client, ClientResources resources) {
        if (p.options.options().containsKey("prefix")) {
            b.keyPrefix(p.options.get("prefix", null));
        }
        return b.description(StoreUrls.redact(p.url)).owning(client).owning(() -> resources.shutdown()).build();
    }

    private static RedisClient client(ClientResources resources, RedisURI uri, Duration timeout) {
        RedisClient client = RedisClient.create(resources, uri);
        client.setOptions(ClientOptions.builder().disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(timeout)).build());
        return client;
    }

    private static RedisURI uri(String url, Duration timeout) {
        RedisURI uri;
        try {
            uri = RedisURI.create(url);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("malformed Redis URL '" + StoreUrls.redact(url) + "': "
                    + StoreUrls.redact(String.valueOf(e.getMessage())) + "; expected redis://[user:password@]host[:port][/db]", e);
        }
        if (uri.getHost() == null && uri.getSentinels().isEmpty() && uri.getSocket() == null) {
            throw new IllegalArgumentException("Redis URL '" + StoreUrls.redact(url) + "' has no host");
        }
        uri.setTimeout(timeout);
        return uri;
    }

    private record Parsed(String url, String userInfo, StoreUrlOptions options) {}

    private static Parsed parse(String url) {
        StoreUrlOptions options = StoreUrlOptions.parse(url, KNOWN, false);
        String clean = options.url();
        String afterScheme = clean.substring(clean.indexOf("://") + 3);
        int at = afterScheme.lastIndexOf('@', firstOf(afterScheme, "/?#"));
        return new Parsed(clean, at >= 0 ? afterScheme.substring(0, at + 1) : "", options);
    }

    private static int firstOf(String s, String chars) {
        int best = s.length();
        for (char c : chars.toCharArray()) {
            int i = s.indexOf(c);
            if (i >= 0 && i < best) {
                best = i;
            }
        }
        return best;
    }

    /** The comma-separated host:port list of a cluster or Redlock URL. */
    private static List<String> hosts(Parsed p) {
        String s = p.url.substring(p.url.indexOf("://") + 3 + p.userInfo.length());
        int end = firstOf(s, "/?#");
        List<String> hosts = new ArrayList<>();
        for (String h : s.substring(0, end).split(",")) {
            if (!h.matches("[A-Za-z0-9._\\-]+(:\\d{1,5})?|\\[[0-9a-fA-F:]+\\](:\\d{1,5})?")) {
                throw new IllegalArgumentException("'" + h + "' in store URL '" + StoreUrls.redact(p.url)
                        + "' is not host[:port]; list the nodes as host:port,host:port,…");
            }
            String withPort = h.matches(".*:\\d{1,5}$") && !h.endsWith("]") ? h : h + ":6379";
            int port = Integer.parseInt(withPort.substring(withPort.lastIndexOf(':') + 1));
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port " + port + " in store URL '" + StoreUrls.redact(p.url) + "' is not 1-65535");
            }
            hosts.add(withPort);
        }
        return hosts;
    }


}
