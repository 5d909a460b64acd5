package dev.turnstile.zookeeper;

import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStoreFactory;
import dev.turnstile.spi.StoreUrlOptions;
import dev.turnstile.spi.StoreUrls;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.jspecify.annotations.Nullable;

/**
 * Opens ZooKeeper stores from URLs:
 * {@code zookeeper://[user:password@]host[:port][,host[:port]…][/chroot][?turnstile.<option>=…]}.
 *
 * <p>The chroot (one or more path segments) becomes the Curator namespace: it is created when
 * missing, and every node of the store lives under it. Credentials, if given, are used for ZooKeeper
 * {@code digest} authentication (percent-encode {@code @ / ? # %} in the password); no message shows
 * the password.
 *
 * <p>Options: {@code turnstile.sessionTimeout} (default 10 s: a holder that dies frees its locks
 * when its session expires; the server may bound it by its {@code minSessionTimeout} and
 * {@code maxSessionTimeout}), {@code turnstile.connectTimeout} (default 5 s: how long a call waits for
 * a connection before it fails with {@link dev.turnstile.StoreUnavailableException}) and
 * {@code turnstile.basePath} (default {@code /turnstile}, under the chroot) and
 * {@code turnstile.queueTimeout} (default 3 s: see {@link ZooKeeperLockStore.Builder#queueTimeout}).
 */
public final class ZooKeeperLockStoreFactory implements LockStoreFactory {
    private static final Set<String> KNOWN = Set.of("sessionTimeout", "connectTimeout", "basePath", "queueTimeout");
    private static final Pattern URL = Pattern.compile(
            "(?i)zookeeper://(?:(?<user>[^:@/]*):(?<password>[^@/]*)@)?(?<hosts>[^/?#]*)(?<path>/[^?#]*)?");
    private static final Pattern HOST_AND_PORT = Pattern.compile("([A-Za-z0-9.\\-]+|\\[[0-9A-Fa-f:.]+\\]):(.*)");
    private static final Pattern HOST = Pattern.compile("(?:[A-Za-z0-9.\\-]+|\\[[0-9A-Fa-f:.]+\\])(?::\\d{1,5})?");

    /** Creates the factory (found through {@link java.util.ServiceLoader}). */
    public ZooKeeperLockStoreFactory() {}

    @Override
    public List<String> schemes() {
        return List.of("zookeeper://");
    }

    /** A parsed URL: the connect string, the namespace, credentials and options. */
    record Parsed(String connect, @Nullable String namespace, @Nullable String auth, Duration sessionTimeout,
            Duration connectTimeout, String basePath, Duration queueTimeout, String description) {}

    static Parsed parse(String url) {
        StoreUrlOptions o = StoreUrlOptions.parse(url, KNOWN, false);
        String safe = StoreUrls.redact(url);
        int query = o.url().indexOf('?');
        if (query >= 0) {
            String names = Arrays.stream(o.url().substring(query + 1).split("&")).map(kv -> kv.split("=", 2)[0])
                    .collect(Collectors.joining(", "));
            throw new IllegalArgumentException("store URL '" + safe + "': unknown option(s) " + names
                    + ": a ZooKeeper URL takes only turnstile.sessionTimeout, turnstile.connectTimeout, turnstile.basePath and "
                    + "turnstile.queueTimeout, "
                    + "e.g. zookeeper://zk1:2181/apps?turnstile.sessionTimeout=10s");
        }
        Matcher m = URL.matcher(o.url());
        if (!m.matches()) {
            throw new IllegalArgumentException("store URL '" + safe + "' is malformed: give "
                    + "zookeeper://host:2181[,host:2181…][/chroot], e.g. zookeeper://zk1:2181,zk2:2181,zk3:2181/apps");
        }
        String hosts = m.group("hosts");
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("store URL '" + safe + "' names no ZooKeeper server: give at least one "
                    + "host[:port], e.g. zookeeper://127.0.0.1:2181");
        }
        StringBuilder connect = new StringBuilder();
        for (String h : hosts.split(",", -1)) {
            Matcher withPort = HOST_AND_PORT.matcher(h);
            if (withPort.matches() && !withPort.group(2).matches("\\d{1,5}")) {
                // a port that is no port number: say what is wrong with the port, not "not a host[:port]"
                String port = withPort.group(2);
                throw new IllegalArgumentException("store URL '" + safe + "': " + (port.matches("[+-]?\\d+")
                        ? "port " + port + " is out of range (1-65535)"
                        : port.isEmpty() ? "'" + h + "' has an empty port: give 1-65535, or no ':' for the default 2181"
                        : "port '" + port + "' of '" + h + "' is not a number: give 1-65535"));
            }
            if (!HOST.matcher(h).matches()) {
                throw new IllegalArgumentException("store URL '" + safe + "': '" + h + "' is not a host[:port]; separate "
                        + "servers with commas, e.g. zookeeper://zk1:2181,zk2:2181");
            }
            // [v6]:port keeps its colons inside the brackets
            String[] hp = h.startsWith("[") ? (h.contains("]:") ? new String[] {h.substring(0, h.indexOf("]:") + 1),
                    h.substring(h.indexOf("]:") + 2)} : new String[] {h}) : h.split(":");
            if (hp.length == 2) {
                int port = Integer.parseInt(hp[1]);
                if (port < 1 || port > 65535) {
                    throw new IllegalArgumentException("store URL '" + safe + "': port " + port + " is out of range (1-65535)");
                }
            }
            connect.append(connect.length() == 0 ? "" : ",").append(h.contains(":") && !h.endsWith("]") ? h : h + ":2181");
        }
        String path = m.group("path");
        String namespace = null;
        if (path != null && !path.equals("/")) {
            String p = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
            if (!p.matches("(/[A-Za-z0-9_\\-.]+)+") || p.matches(".*/\\.{1,2}(/.*)?") || p.equals("/zookeeper")
                    || p.startsWith("/zookeeper/")) {
                throw new IllegalArgumentException("store URL '" + safe + "': chroot '" + p + "' is invalid: give path "
                        + "segments of letters, digits, '-', '_' and '.', not '.', '..' or the reserved /zookeeper");
            }
            namespace = p.substring(1);
        }
        String auth = null;
        if (m.group("user") != null) {
            try {
                auth = URLDecoder.decode(m.group("user"), StandardCharsets.UTF_8) + ":"
                        + URLDecoder.decode(m.group("password").replace("+", "%2B"), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException badEscape) {
                // URLDecoder's message quotes the bad escape, a piece of the password: not shown
                throw new IllegalArgumentException("store URL '" + safe + "': the user name or password holds a '%' that "
                        + "is not a percent escape: write % as %25 (and @ / : ? # as %40 %2F %3A %3F %23)");
            }
        }
        // The server bounds a session to 2 to 20 of its ticks; beyond these ranges a value is a typo
        // (and past Integer.MAX_VALUE ms it would wrap into a session of a few hundred ms).
        Duration session = o.duration("sessionTimeout", Duration.ofSeconds(10), Duration.ofMillis(100), Duration.ofMinutes(10));
        Duration connectTimeout = o.duration("connectTimeout", Duration.ofSeconds(5), Duration.ofMillis(10), Duration.ofMinutes(10));
        String basePath = o.get("basePath", "/turnstile");
        Duration queueTimeout = o.duration("queueTimeout", ZooKeeperLockStore.DEFAULT_QUEUE_TIMEOUT);
        String description = "zookeeper://" + connect + (namespace == null ? "" : "/" + namespace);
        return new Parsed(connect.toString(), namespace, auth, session, connectTimeout, basePath, queueTimeout, description);
    }

    @Override
    public LockStore open(String url) {
        Parsed p = parse(url);
        ZooKeeperLockStore.Builder b;
        CuratorFrameworkFactory.Builder cb = CuratorFrameworkFactory.builder()
                .connectString(p.connect())
                .sessionTimeoutMs((int) p.sessionTimeout().toMillis())
                .connectionTimeoutMs((int) p.connectTimeout().toMillis())
                // One retry of a call cut by a connection loss: the connect timeout bounds each try.
                .retryPolicy(new RetryNTimes(1, 100))
                .namespace(p.namespace());
        if (p.auth() != null) {
            cb.authorization("digest", p.auth().getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework client = cb.build();
        try {
            b = ZooKeeperLockStore.builder(client).basePath(p.basePath()).sessionTimeout(p.sessionTimeout())
                    .queueTimeout(p.queueTimeout()).owningClient().description(p.description() + " (base " + p.basePath() + ")");
            return b.build();
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }
}
