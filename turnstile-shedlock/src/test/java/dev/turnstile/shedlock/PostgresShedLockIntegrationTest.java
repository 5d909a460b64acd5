package dev.turnstile.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.Turnstile;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** ShedLock's own provider test suite (lock, unlock, extend, lockAtLeastFor, fuzz) over Postgres. */
class PostgresShedLockIntegrationTest extends AbstractExtensibleLockProviderIntegrationTest {
    private static Turnstile turnstile;
    private static TurnstileLockProvider provider;

    @BeforeAll
    static void open() {
        turnstile = ProviderTestSupport.open(ProviderTestSupport.POSTGRES);
        provider = new TurnstileLockProvider(turnstile);
    }

    @AfterAll
    static void close() {
        turnstile.close();
        turnstile.store().close();
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return provider;
    }

    @Override
    protected void assertUnlocked(String lockName) {
        assertThat(ProviderTestSupport.held(turnstile, lockName)).as("'%s' is free in the store", lockName).isFalse();
    }

    @Override
    protected void assertLocked(String lockName) {
        assertThat(ProviderTestSupport.held(turnstile, lockName)).as("'%s' is held in the store", lockName).isTrue();
    }
}
