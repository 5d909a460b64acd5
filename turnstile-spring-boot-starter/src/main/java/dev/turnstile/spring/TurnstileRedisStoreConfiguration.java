package dev.turnstile.spring;

import dev.turnstile.Turnstile;
import dev.turnstile.redis.RedisLockStore;
import dev.turnstile.spi.LockStore;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A store over the application's Spring Data Redis connection, when it is Lettuce (the Boot
 * default): the store uses the factory's own Lettuce client (standalone, Sentinel or Cluster) and
 * opens its own two connections on it (commands, and release notifications), which it closes on
 * shutdown; the client stays the application's.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = {"dev.turnstile.redis.RedisLockStore",
        "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory"})
@ConditionalOnSingleCandidate(LettuceConnectionFactory.class)
@ConditionalOnMissingBean({LockStore.class, Turnstile.class})
class TurnstileRedisStoreConfiguration {

    @Bean(destroyMethod = "close")
    LockStore turnstileLockStore(LettuceConnectionFactory factory, TurnstileProperties props) {
        AbstractRedisClient client = factory.getRequiredNativeClient();
        RedisLockStore.Builder builder;
        if (client instanceof RedisClusterClient cluster) {
            builder = RedisLockStore.builder(cluster);
        } else if (client instanceof RedisClient standalone) {
            builder = RedisLockStore.builder(standalone);
        } else {
            throw new IllegalStateException("the application's LettuceConnectionFactory has a " + client.getClass().getName()
                    + ", which turnstile-redis cannot use: set turnstile.store.url, or define a LockStore bean");
        }
        try {
            builder.keyPrefix(props.getRedis().getKeyPrefix());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("turnstile.redis.key-prefix: " + e.getMessage(), e);
        }
        return TurnstileStoreConfigurations.checked(builder.build(), props, null);
    }
}
