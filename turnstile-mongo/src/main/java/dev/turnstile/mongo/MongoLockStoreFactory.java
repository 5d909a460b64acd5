package dev.turnstile.mongo;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStoreFactory;
import dev.turnstile.spi.StoreUrlOptions;
import dev.turnstile.spi.StoreUrls;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Opens MongoDB stores from the driver's own connection strings:
 * {@code mongodb://[user:password@]host[:port][,host2[:port2]…]/database[?options]} and
 * {@code mongodb+srv://…}. The database (the path) is required: it holds the lock collection.
 *
 * <p>The driver's options apply as usual ({@code replicaSet}, {@code tls}, {@code authSource},
 * {@code w}, {@code serverSelectionTimeoutMS}, {@code connectTimeoutMS}, {@code socketTimeoutMS}…);
 * the write concern is {@code majority} unless the URL gives {@code w}. Turnstile's options ride
 * beside them: {@code turnstile.collection} (default {@code turnstile_locks}) and
 * {@code turnstile.timeout} (default 5 s, 10 ms to 1 h: how long choosing a server and waiting for
 * an answer may take, where the URL does not set {@code serverSelectionTimeoutMS} or
 * {@code socketTimeoutMS}; the driver's own defaults, 30 s and none, would leave a lock call
 * hanging). A server that cannot be reached is reported in one line (connection refused, unknown
 * host, not a MongoDB server, authentication failed) after one timeout, not one per call of an
 * acquire and its undo. No message shows the password.
 */
public final class MongoLockStoreFactory implements LockStoreFactory {
    private static final Set<String> KNOWN = Set.of("collection", "timeout");

    @Override
    public List<String> schemes() {
        return List.of("mongodb://", "mongodb+srv://");
    }

    @Override
    public LockStore open(String url) {
        Parsed p = parse(url);
        ConnectionString cs = p.connection();
        long ms = p.timeout().toMillis();
        MongoClientSettings.Builder settings = MongoClientSettings.builder().applyConnectionString(cs)
                .applicationName(cs.getApplicationName() != null ? cs.getApplicationName() : "turnstile");
        if (cs.getServerSelectionTimeout() == null) {
            settings.applyToClusterSettings(b -> b.serverSelectionTimeout(ms, TimeUnit.MILLISECONDS));
        }
        settings.applyToSocketSettings(b -> {
            if (cs.getConnectTimeout() == null) {
                // a connect that times out ends before the server selection does, so the message can
                // say that nothing accepted the connection (a firewall) rather than only "no answer"
                b.connectTimeout(Math.max(1, Math.min(ms - ms / 5, 5_000)), TimeUnit.MILLISECONDS);
            }
            if (cs.getSocketTimeout() == null) {
                b.readTimeout(ms, TimeUnit.MILLISECONDS);
            }
        });
        MongoClient client = MongoClients.create(settings.build());
        try {
            MongoLockStore.Builder b = MongoLockStore.builder(client, p.database()).collection(p.collection()).description(describe(cs))
                    .owning(client);
            if (cs.getWriteConcern() != null) {
                b.writeConcern(cs.getWriteConcern());
            }
            return b.build();
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * MongoDB needs no schema: the collection appears with the first acquire, and {@code _id} is its
     * only index. The URL is still checked, so that {@code turnstile schema} refuses a bad one.
     */
    @Override
    public String schema(String url) {
        parse(url);
        return "";
    }

    private record Parsed(ConnectionString connection, String database, String collection, Duration timeout) {}

    /** Checks the URL and splits it into the driver's connection string and Turnstile's options; connects to nothing. */
    private static Parsed parse(String url) {
        StoreUrlOptions options;
        try {
            options = StoreUrlOptions.parse(url, KNOWN, false);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(String.valueOf(e.getMessage()).replace(StoreUrls.redact(url), safe(url)));
        }
        String collection = MongoLockStore.checkCollection(options.get("collection", MongoLockStore.DEFAULT_COLLECTION));
        Duration timeout = options.duration("timeout", Duration.ofSeconds(5), Duration.ofMillis(10), Duration.ofHours(1));
        checkUserInfo(url);
        checkPorts(options.url());
        ConnectionString cs;
        try {
            cs = new ConnectionString(options.url());
        } catch (IllegalArgumentException e) {
            // The driver's message may quote parts of the URL: say what is wrong without them.
            throw new IllegalArgumentException("malformed MongoDB URL '" + safe(url) + "': " + StoreUrls.scrub(e.getMessage(), url)
                    + "; expected mongodb://[user:password@]host[:port][,host:port…]/database[?options], with @ / : ? # % in "
                    + "the password written as %40 %2F %3A %3F %23 %25");
        }
        if (cs.getDatabase() == null || cs.getDatabase().isEmpty()) {
            throw new IllegalArgumentException("MongoDB URL '" + safe(url) + "' names no database: add it as the path, for example "
                    + "mongodb://host:27017/app (the lock collection '" + collection + "' lives there)");
        }
        if (cs.getCollection() != null) {
            throw new IllegalArgumentException("MongoDB URL '" + safe(url) + "': its path /" + cs.getDatabase() + "."
                    + cs.getCollection() + " names database '" + cs.getDatabase() + "' and collection '" + cs.getCollection()
                    + "', and the collection part would be ignored: give only the database in the path, and the collection as "
                    + "turnstile.collection=" + cs.getCollection());
        }
        return new Parsed(cs, MongoLockStore.checkDatabase(cs.getDatabase()), collection, timeout);
    }

    /**
     * Refuses a {@code %} in the user info that is not a percent escape before the driver reads it:
     * the driver's message quotes the two characters after it ({@code Error at index 0 in: "Q7"}),
     * a piece of the password or user name.
     */
    private static final String HEX = "0123456789abcdefABCDEF";

    private static void checkUserInfo(String url) {
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');
        if (scheme < 0 || at <= scheme) {
            return;
        }
        String userInfo = url.substring(scheme + 3, at);
        for (int i = userInfo.indexOf('%'); i >= 0; i = userInfo.indexOf('%', i + 1)) {
            if (i + 2 >= userInfo.length() || HEX.indexOf(userInfo.charAt(i + 1)) < 0 || HEX.indexOf(userInfo.charAt(i + 2)) < 0) {
                throw new IllegalArgumentException("malformed MongoDB URL '" + safe(url) + "': the user info (user:password "
                        + "before '@') holds a '%' that is not a percent escape: write % as %25 (and @ / : ? # as %40 %2F %3A "
                        + "%3F %23)");
            }
        }
    }

    private static final java.util.regex.Pattern HOST_AND_PORT =
            java.util.regex.Pattern.compile("([^\\[\\]:]+|\\[[^\\]]*\\]):(.*)");

    /**
     * Names a port that is no port number as such, rather than the driver's "invalid host" (or, for
     * a number past an int, its NumberFormatException text).
     */
    private static void checkPorts(String url) {
        int scheme = url.indexOf("://");
        if (scheme < 0 || url.regionMatches(true, 0, "mongodb+srv", 0, 11)) {
            return; // mongodb+srv:// takes no port; the driver says so
        }
        String rest = url.substring(scheme + 3);
        int end = rest.length();
        for (char c : new char[] {'/', '?', '#'}) {
            int i = rest.indexOf(c);
            if (i >= 0 && i < end) {
                end = i;
            }
        }
        String hosts = rest.substring(0, end);
        hosts = hosts.substring(hosts.lastIndexOf('@') + 1);
        for (String h : hosts.split(",", -1)) {
            java.util.regex.Matcher m = HOST_AND_PORT.matcher(h);
            if (!m.matches()) {
                continue;
            }
            String port = m.group(2);
            boolean number = port.matches("[+-]?\\d+");
            if (number && port.matches("\\d{1,5}") && Integer.parseInt(port) >= 1 && Integer.parseInt(port) <= 65535) {
                continue;
            }
            throw new IllegalArgumentException("malformed MongoDB URL '" + safe(url) + "': " + (number
                    ? "port " + port + " is out of range (1-65535)"
                    : port.isEmpty() ? "'" + h + "' has an empty port: give 1-65535, or no ':' for the default 27017"
                    : "port '" + port + "' of '" + h + "' is not a number: give 1-65535"));
        }
    }

    /** {@code mongodb://hosts/database}, without user info or options. */
    static String describe(ConnectionString cs) {
        String scheme = cs.isSrvProtocol() ? "mongodb+srv://" : "mongodb://";
        return scheme + String.join(",", cs.getHosts()) + "/" + cs.getDatabase();
    }

    /** The URL for messages: whatever precedes the last {@code @} is user info and is hidden. */
    static String safe(String url) {
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');
        String s = scheme >= 0 && at > scheme ? url.substring(0, scheme + 3) + "***@" + url.substring(at + 1) : url;
        return StoreUrls.redact(s);
    }
}
