package dev.turnstile.bench;

import io.lettuce.core.KeyScanArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.ArrayList;
import java.util.List;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The Redis server every Redis contender runs against ({@code bench.redisUrl}, default
 * {@code redis://127.0.0.1:6379}), how each library connects to it, and which keys are the bench's.
 *
 * <p>Bench keys: Turnstile's default prefix with names starting {@code bench-}
 * ({@code turnstile:{bench-…}} and its {@code :fence} counter), and everything else under
 * {@code bench:} (the floor's keys, Redisson's lock hashes, Spring's registry key {@code bench}
 * and ShedLock's key prefix {@code bench}). {@link #deleteBenchKeys()} removes exactly those, so
 * Turnstile's own tests on the same server never see them.
 */
final class BenchRedis {
    /** Prefix of every non-Turnstile bench key. */
    static final String KEY_PREFIX = "bench:";
    private static final List<String> PATTERNS = List.of(KEY_PREFIX + "*", "turnstile:{bench-*");

    private BenchRedis() {}

    static String url() {
        return BenchConfig.redisUrl();
    }

    /** A plain Lettuce client with default options (as an application would build one). */
    static RedisClient lettuce() {
        return RedisClient.create(url());
    }

    /** Redisson with its defaults, on the same server. */
    static RedissonClient redisson() {
        RedisURI uri = RedisURI.create(url());
        Config config = new Config();
        var single = config.useSingleServer().setAddress("redis://" + uri.getHost() + ":" + uri.getPort())
                .setDatabase(uri.getDatabase());
        char[] password = password(uri);
        if (password != null) {
            single.setPassword(new String(password));
        }
        return Redisson.create(config);
    }

    /** Spring Data Redis's Lettuce connection factory, set up and started outside a context. */
    static LettuceConnectionFactory springFactory() {
        RedisURI uri = RedisURI.create(url());
        RedisStandaloneConfiguration conf = new RedisStandaloneConfiguration(uri.getHost(), uri.getPort());
        conf.setDatabase(uri.getDatabase());
        char[] password = password(uri);
        if (password != null) {
            conf.setPassword(password);
        }
        LettuceConnectionFactory factory = new LettuceConnectionFactory(conf);
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    /** The URL's password, if it has one (Lettuce 7 has no {@code RedisURI.getPassword()}). */
    private static char[] password(RedisURI uri) {
        RedisCredentials credentials = uri.getCredentialsProvider().resolveCredentials().block();
        return credentials != null && credentials.hasPassword() ? credentials.getPassword() : null;
    }

    /**
     * Deletes every bench key (see the class comment).
     *
     * @return how many keys were deleted
     */
    static long deleteBenchKeys() {
        RedisClient client = lettuce();
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            return deleteBenchKeys(c.sync());
        } finally {
            client.shutdown();
        }
    }

    static long deleteBenchKeys(RedisCommands<String, String> redis) {
        long deleted = 0;
        for (String pattern : PATTERNS) {
            List<String> keys = new ArrayList<>();
            for (ScanIterator<String> it = ScanIterator.scan(redis, KeyScanArgs.Builder.matches(pattern).limit(1000)); it.hasNext(); ) {
                keys.add(it.next());
            }
            for (int i = 0; i < keys.size(); i += 500) {
                deleted += redis.del(keys.subList(i, Math.min(keys.size(), i + 500)).toArray(new String[0]));
            }
        }
        return deleted;
    }
}
