package dev.turnstile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Hostile input at every public entry point of the library: a null is bad input like any other, so
 * it raises {@link IllegalArgumentException} with a message that names the parameter and says what
 * to pass, and leaves nothing behind in the store.
 */
class LibraryMisuseTest {
    static final InMemoryLockStore STORE = new InMemoryLockStore();
    static final Turnstile CLIENT = Turnstile.builder(STORE).build();
    static final LockOptions OPTIONS = LockOptions.defaults();

    static Stream<Arguments> nullArguments() {
        Lease lease = CLIENT.tryAcquire("misuse-extend").orElseThrow();
        Lease reentrant = CLIENT.tryAcquire("misuse-extend-reentrant", LockOptions.builder().reentrant().build()).orElseThrow();
        return Stream.of(
                Arguments.of("Turnstile.builder(null)", (ThrowingCallable) () -> Turnstile.builder(null), "store"),
                Arguments.of("Turnstile.checkLockName(null)", (ThrowingCallable) () -> Turnstile.checkLockName(null), "lock name"),
                Arguments.of("Builder.owner(null)", (ThrowingCallable) () -> Turnstile.builder(STORE).owner(null), "owner"),
                Arguments.of("Builder.pollInterval(null, max)",
                        (ThrowingCallable) () -> Turnstile.builder(STORE).pollInterval(null, Duration.ofSeconds(1)), "poll interval"),
                Arguments.of("Builder.pollInterval(min, null)",
                        (ThrowingCallable) () -> Turnstile.builder(STORE).pollInterval(Duration.ofMillis(2), null), "poll interval"),
                Arguments.of("Builder.handOffCourtesy(null)", (ThrowingCallable) () -> Turnstile.builder(STORE).handOffCourtesy(null), "courtesy"),
                Arguments.of("tryAcquire(null)", (ThrowingCallable) () -> CLIENT.tryAcquire(null), "lock name"),
                Arguments.of("tryAcquire(null, options)", (ThrowingCallable) () -> CLIENT.tryAcquire(null, OPTIONS), "lock name"),
                Arguments.of("tryAcquire(name, null)", (ThrowingCallable) () -> CLIENT.tryAcquire("misuse", null), "options"),
                Arguments.of("acquire(null, options, wait)",
                        (ThrowingCallable) () -> CLIENT.acquire(null, OPTIONS, Duration.ZERO), "lock name"),
                Arguments.of("acquire(name, null, wait)",
                        (ThrowingCallable) () -> CLIENT.acquire("misuse", null, Duration.ZERO), "options"),
                Arguments.of("acquire(name, options, null)", (ThrowingCallable) () -> CLIENT.acquire("misuse", OPTIONS, null), "maxWait"),
                Arguments.of("forceRelease(null)", (ThrowingCallable) () -> CLIENT.forceRelease(null), "lock name"),
                Arguments.of("LockOptions.lockAtMostFor(null)", (ThrowingCallable) () -> LockOptions.lockAtMostFor(null), "lockAtMostFor"),
                Arguments.of("LockOptions.Builder.lockAtMostFor(null)",
                        (ThrowingCallable) () -> LockOptions.builder().lockAtMostFor(null), "lockAtMostFor"),
                Arguments.of("LockOptions.Builder.lockAtLeastFor(null)",
                        (ThrowingCallable) () -> LockOptions.builder().lockAtLeastFor(null), "lockAtLeastFor"),
                Arguments.of("LockOptions.Builder.keepAlive((Duration) null)",
                        (ThrowingCallable) () -> LockOptions.builder().keepAlive((Duration) null), "keepAlive interval"),
                Arguments.of("LockOptions.Builder.onLost(null)", (ThrowingCallable) () -> LockOptions.builder().onLost(null), "onLost"),
                Arguments.of("LockOptions.Builder.reentrantFor(null)",
                        (ThrowingCallable) () -> LockOptions.builder().reentrantFor(null), "reentrancy context"),
                Arguments.of("Lease.extend(null)", (ThrowingCallable) () -> lease.extend(null), "lockAtMostFor"),
                Arguments.of("re-entrant Lease.extend(null)", (ThrowingCallable) () -> reentrant.extend(null), "lockAtMostFor"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("nullArguments")
    void aNullArgumentIsAnIllegalArgumentExceptionThatSaysWhatToPass(String entryPoint, ThrowingCallable call, String names) {
        int before = STORE.heldLocks().size();
        assertThatThrownBy(call).as(entryPoint).isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(names).hasMessageContaining("null");
        assertThat(STORE.heldLocks()).as("nothing taken").hasSize(before);
    }

    @Test
    void aNullArgumentToAnExtendLeavesTheLeaseAsItWas() {
        Lease lease = CLIENT.tryAcquire("misuse-extend-kept", LockOptions.lockAtMostFor(Duration.ofSeconds(30))).orElseThrow();
        java.time.Instant before = lease.expiresAt();
        assertThatThrownBy(() -> lease.extend(null)).isInstanceOf(IllegalArgumentException.class);
        assertThat(lease.isHeld()).isTrue();
        assertThat(lease.expiresAt()).isEqualTo(before);
        lease.release();
    }

    @Test
    void aClientOverAClosedStoreSaysTheStoreIsClosedAndLogsNoOutage() {
        InMemoryLockStore store = new InMemoryLockStore();
        Turnstile t = Turnstile.builder(store).build();
        store.close();
        assertThatThrownBy(() -> t.tryAcquire("x")).isExactlyInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the LockStore in-memory store is closed");
        assertThatThrownBy(() -> Turnstile.builder(store).build()).isExactlyInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed");
        t.close();
    }

    @Test
    void aStoreThatDoesNotCheckItselfIsStillReportedClosedByTheClient() {
        TurnstileTest.FlakyStore inner = new TurnstileTest.FlakyStore();
        boolean[] closed = {false};
        dev.turnstile.spi.LockStore store = new dev.turnstile.spi.LockStore() {
            @Override public java.util.Optional<dev.turnstile.spi.Grant> tryAcquire(dev.turnstile.spi.AcquireRequest r) { return inner.tryAcquire(r); }
            @Override public boolean extend(String n, String t, Duration d) { return inner.extend(n, t, d); }
            @Override public boolean release(String n, String t, Duration d) { return inner.release(n, t, d); }
            @Override public java.util.List<LockInfo> heldLocks() { return inner.heldLocks(); }
            @Override public boolean forceRelease(String n) { return inner.forceRelease(n); }
            @Override public String description() { return "third-party store"; }
            @Override public void close() { closed[0] = true; inner.down.set(true); }
            @Override public boolean isClosed() { return closed[0]; }
        };
        Turnstile t = Turnstile.builder(store).build();
        store.close();
        assertThatThrownBy(() -> t.tryAcquire("x")).isExactlyInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the LockStore third-party store is closed")
                .hasCauseInstanceOf(StoreUnavailableException.class);
        assertThatThrownBy(t::heldLocks).isExactlyInstanceOf(IllegalStateException.class);
        t.close();
    }

    @Test
    void pruningOnAStoreThatCannotSaysSoAndBadPeriodsAreRefused() {
        dev.turnstile.spi.LockStore cannot = new dev.turnstile.spi.LockStore() {
            @Override
            public java.util.Optional<dev.turnstile.spi.Grant> tryAcquire(dev.turnstile.spi.AcquireRequest request) {
                return STORE.tryAcquire(request);
            }

            @Override
            public boolean extend(String name, String token, java.time.Duration ttl) {
                return STORE.extend(name, token, ttl);
            }

            @Override
            public boolean release(String name, String token, java.time.Duration lockAtLeastFor) {
                return STORE.release(name, token, lockAtLeastFor);
            }

            @Override
            public java.util.List<LockInfo> heldLocks() {
                return STORE.heldLocks();
            }

            @Override
            public boolean forceRelease(String name) {
                return STORE.forceRelease(name);
            }

            @Override
            public String description() {
                return "a store without pruning";
            }
        };
        assertThatThrownBy(() -> Turnstile.builder(cannot).build().pruneUnused(java.time.Duration.ofDays(7)))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("a store without pruning cannot prune lock names").hasMessageContaining("ZooKeeper keeps nothing");
        Turnstile t = Turnstile.builder(STORE).build();
        assertThatThrownBy(() -> t.pruneUnused(java.time.Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("give a duration from zero up to 366 days");
        assertThatThrownBy(() -> t.pruneUnused(java.time.Duration.ofDays(367))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unusedFor is PT8808H");
    }

    @AfterEach
    void nothingLeftBehind() {
        assertThat(STORE.heldLocks()).extracting(LockInfo::name).allMatch(n -> n.startsWith("misuse-extend"));
    }
}
