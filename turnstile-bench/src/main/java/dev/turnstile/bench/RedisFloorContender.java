package dev.turnstile.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The raw Redis floor: the least a correct Redis lock does, on one Lettuce connection shared by
 * every thread. Acquire is {@code SET key token NX PX 30000}; release is an {@code EVALSHA} of a
 * compare-and-delete script, so only the holder's token frees the key. A fresh 128-bit random
 * token per cycle, as Turnstile makes. Keys are {@code bench:<lock name>}.
 */
final class RedisFloorContender implements Contender {
    static final String COMPARE_AND_DELETE =
            "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
    private static final SetArgs NX_PX = SetArgs.Builder.nx().px(30_000);

    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> redis;
    private final String releaseSha;

    RedisFloorContender(RedisClient client) {
        this.connection = client.connect();
        this.redis = connection.sync();
        this.releaseSha = redis.scriptLoad(COMPARE_AND_DELETE);
    }

    @Override
    public String id() {
        return "FLOOR";
    }

    @Override
    public boolean acquireRelease(String lockName) {
        String key = BenchRedis.KEY_PREFIX + lockName;
        String token = FloorContender.newToken();
        if (!"OK".equals(redis.set(key, token, NX_PX))) {
            return false;
        }
        Long deleted = redis.evalsha(releaseSha, ScriptOutputType.INTEGER, new String[] {key}, token);
        return deleted != null && deleted == 1L;
    }

    @Override
    public void close() {
        connection.close();
    }
}
