package dev.turnstile.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.Lease;
import dev.turnstile.LockInfo;
import dev.turnstile.LockOptions;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The console's pages and actions, on the in-memory store of turnstile-core's testing package. */
class ConsoleTest {
    private static final ConsoleRequest.CsrfField CSRF = new ConsoleRequest.CsrfField("csrf", "s3cret-csrf-value");
    private static final String HOSTILE = "<script>alert('x')</script>\"><img src=x onerror=alert(1)>&amp;";

    private final InMemoryLockStore store = new InMemoryLockStore();
    private final Turnstile turnstile = Turnstile.builder(store).owner("app@<b>host</b>").build();
    private final List<ReleaseRecord> audited = new ArrayList<>();

    @AfterEach
    void close() {
        turnstile.close();
        store.close();
    }

    private Console console(boolean actions) {
        return Console.builder(turnstile).actionsEnabled(actions, "enable them in the test.").auditListener(audited::add).build();
    }

    private static ConsoleRequest get(String path, Map<String, String> params) {
        return new ConsoleRequest("GET", path, params, "/base", "ops", "10.0.0.5", null, "console.test", CSRF, Map.of());
    }

    private static ConsoleRequest post(String path, Map<String, String> params, @Nullable String origin) {
        return new ConsoleRequest("POST", path, params, "/base", "ops", "10.0.0.5", origin, "console.test", CSRF, Map.of());
    }

    private Lease hold(String name) {
        return turnstile.tryAcquire(name, LockOptions.builder().lockAtMostFor(Duration.ofMinutes(5)).build()).orElseThrow();
    }

    @Test
    void listsHeldLocksWithEveryNameAndHolderEscaped() {
        Lease lease = hold(HOSTILE);
        hold("nightly-report");
        ConsoleResponse r = console(false).handle(get("/", Map.of()));
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.contentType()).startsWith("text/html");
        assertThat(r.body()).contains("nightly-report").contains("2 locks held")
                .contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&amp;amp;")
                .contains("app@&lt;b&gt;host&lt;/b&gt;")
                .contains(">" + lease.fence() + "<")
                .doesNotContain("<script>alert").doesNotContain("<img").doesNotContain("<b>host")
                .doesNotContain("Release…"); // read-only
    }

    @Test
    void controlCharactersAndSeparatorsAreShownNotObeyed() {
        String name = "a\u202Eevil\u2028b\\u0007";
        hold(name);
        String body = console(false).handle(get("/", Map.of())).body();
        assertThat(body).contains("a\\u202eevil\\u2028b\\\\u0007").doesNotContain("\u202E").doesNotContain("\u2028");
    }

    @Test
    void filtersByNameOrHolderAndCapsTheRows() {
        for (int i = 0; i < 30; i++) {
            hold("job-" + i);
        }
        hold("other");
        Console console = Console.builder(turnstile).maxRows(10).build();
        String all = console.handle(get("/", Map.of())).body();
        assertThat(all).contains("31 locks held; the first 10 by name are shown");
        assertThat(all.split("<tr>", -1)).hasSize(1 + 1 + 10); // before the table, the header row, 10 rows
        String one = console.handle(get("/", Map.of("q", "OTHER"))).body();
        assertThat(one).contains("1 lock of 31 match").contains(">other<").doesNotContain(">job-1<");
        String byHolder = console.handle(get("/", Map.of("q", "<b>HOST"))).body();
        assertThat(byHolder).contains("31 locks of 31 match");
        String none = console.handle(get("/", Map.of("q", "\"><script>"))).body();
        assertThat(none).contains("0 locks of 31 match").contains("value=\"&quot;&gt;&lt;script&gt;\"");
    }

    @Test
    void neverShowsTheStoreUrlOnlyItsKind() {
        LockStore described = new DescribedStore(store, "jdbc:postgresql://db.internal:5432/orders?user=app&password=****");
        try (Turnstile t = Turnstile.builder(described).build()) {
            Console console = Console.builder(t).build();
            String body = console.handle(get("/", Map.of())).body();
            assertThat(console.storeLabel()).isEqualTo("PostgreSQL");
            assertThat(body).contains("PostgreSQL").doesNotContain("db.internal").doesNotContain("orders").doesNotContain("5432");
        }
    }

    @Test
    void readOnlyConsoleRefusesEveryActionAndKeepsTheLock() {
        Lease lease = hold("payments");
        Console console = console(false);
        ConsoleResponse confirm = console.handle(get("/release", Map.of("name", "payments")));
        assertThat(confirm.status()).isEqualTo(403);
        assertThat(confirm.body()).contains("read-only").contains("enable them in the test.");
        ConsoleResponse act = console.handle(post("/release", Map.of("name", "payments", "fence", Long.toString(lease.fence()),
                "csrf", CSRF.value()), null));
        assertThat(act.status()).isEqualTo(403);
        assertThat(lease.isHeld()).isTrue();
        assertThat(store.heldLocks()).extracting(LockInfo::name).containsExactly("payments");
        assertThat(audited).isEmpty();
    }

    @Test
    void confirmationShowsWhoseHoldingIsCutAndCarriesTheFenceAndCsrfToken() {
        Lease lease = hold(HOSTILE);
        ConsoleResponse r = console(true).handle(get("/release", Map.of("name", HOSTILE)));
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).contains("Force-release a lock").contains("app@&lt;b&gt;host&lt;/b&gt;")
                .contains("name=\"fence\" value=\"" + lease.fence() + "\"")
                .contains("name=\"csrf\" value=\"s3cret-csrf-value\"")
                .contains("action=\"/base/release\"")
                .doesNotContain("<script>alert");
        assertThat(lease.isHeld()).isTrue(); // a GET never releases
        assertThat(console(true).handle(get("/release", Map.of("name", "not-held"))).body()).contains("is not held");
    }

    @Test
    void releaseWithTheShownFenceFreesTheLockAndRecordsWhoCutWhichFence() {
        Lease lease = hold(HOSTILE);
        Console console = console(true);
        ConsoleResponse r = console.handle(post("/release", Map.of("name", HOSTILE, "fence", Long.toString(lease.fence()),
                "csrf", CSRF.value()), "http://console.test"));
        assertThat(r.status()).isEqualTo(303);
        assertThat(r.headers()).containsEntry("Location", "/base/history");
        assertThat(store.heldLocks()).isEmpty();
        assertThat(audited).singleElement().satisfies(rec -> {
            assertThat(rec.name()).isEqualTo(HOSTILE);
            assertThat(rec.freed()).isTrue();
            assertThat(rec.fence()).isEqualTo(lease.fence());
            assertThat(rec.holder()).isEqualTo("app@<b>host</b>");
            assertThat(rec.user()).isEqualTo("ops");
            assertThat(rec.from()).isEqualTo("10.0.0.5");
            assertThat(rec.line()).startsWith("console: lock '" + HOSTILE.replace("'", "\\'") + "' freed (held by 'app@<b>host</b>', fence "
                    + lease.fence() + ") by user 'ops' from 10.0.0.5 at ").endsWith(" on in-memory");
        });
        String history = console.handle(get("/history", Map.of())).body();
        assertThat(history).contains("freed").contains(">" + lease.fence() + "<").contains("10.0.0.5").contains(">ops<")
                .doesNotContain("<script>alert");
        assertThat(console.history()).hasSize(1);
    }

    @Test
    void refusesAnActionWithoutTheCsrfTokenOrFromAnotherSite() {
        Lease lease = hold("payments");
        Console console = console(true);
        String fence = Long.toString(lease.fence());
        assertThat(console.handle(post("/release", Map.of("name", "payments", "fence", fence), null)).status()).isEqualTo(403);
        assertThat(console.handle(post("/release", Map.of("name", "payments", "fence", fence, "csrf", "guess"), null)).status())
                .isEqualTo(403);
        ConsoleResponse crossSite = console.handle(post("/release", Map.of("name", "payments", "fence", fence,
                "csrf", CSRF.value()), "https://evil.example"));
        assertThat(crossSite.status()).isEqualTo(403);
        assertThat(crossSite.body()).contains("another site");
        ConsoleRequest noToken = new ConsoleRequest("POST", "/release", Map.of("name", "payments", "fence", fence, "csrf", "x"),
                "", null, "127.0.0.1", null, "h", null, Map.of());
        assertThat(console.handle(noToken).status()).isEqualTo(403);
        assertThat(lease.isHeld()).isTrue();
        assertThat(store.heldLocks()).hasSize(1);
        assertThat(audited).isEmpty();
    }

    @Test
    void aLockThatChangedHandsSinceTheConfirmationIsNotReleased() {
        Lease first = hold("payments");
        long shown = first.fence();
        first.release();
        Lease second = hold("payments");
        ConsoleResponse r = console(true).handle(post("/release", Map.of("name", "payments", "fence", Long.toString(shown),
                "csrf", CSRF.value()), null));
        assertThat(r.status()).isEqualTo(409);
        assertThat(r.body()).contains("not held with fence " + shown).contains("fence " + second.fence());
        assertThat(second.isHeld()).isTrue();
        assertThat(audited).isEmpty();
        ConsoleResponse gone = console(true).handle(post("/release", Map.of("name", "nobody", "fence", "1", "csrf", CSRF.value()), null));
        assertThat(gone.status()).isEqualTo(409);
        assertThat(gone.body()).contains("not held any more");
    }

    @Test
    void badInputGetsAPageThatSaysWhatToFix() {
        Console console = console(true);
        for (Map<String, String> params : List.of(Map.<String, String>of(), Map.of("name", ""), Map.of("name", " padded "),
                Map.of("name", "a\u0000b"), Map.of("name", "x".repeat(256)), Map.of("name", "\uD800"))) {
            Map<String, String> withCsrf = new HashMap<>(params);
            withCsrf.put("csrf", CSRF.value());
            withCsrf.put("fence", "1");
            ConsoleResponse r = console.handle(post("/release", withCsrf, null));
            assertThat(r.status()).as("%s", params).isEqualTo(400);
            assertThat(r.body()).contains("valid lock name");
        }
        hold("payments");
        for (String fence : List.of("", "abc", "99999999999999999999999", "1e3")) {
            ConsoleResponse r = console.handle(post("/release", Map.of("name", "payments", "fence", fence, "csrf", CSRF.value()), null));
            assertThat(r.status()).as(fence).isIn(400, 409);
        }
        assertThat(store.heldLocks()).hasSize(1);
        assertThat(console.handle(get("/nope<script>", Map.of())).status()).isEqualTo(404);
        assertThat(console.handle(get("/nope<script>", Map.of())).body()).contains("/nope&lt;script&gt;");
        ConsoleResponse put = console.handle(new ConsoleRequest("PUT", "/", Map.of(), "", null, "1.2.3.4", null, null, null, Map.of()));
        assertThat(put.status()).isEqualTo(405);
        assertThat(put.headers()).containsEntry("Allow", "GET");
        assertThat(console.handle(get("/static/console.css", Map.of())).contentType()).startsWith("text/css");
        assertThat(console.handle(get("/static/../../etc/passwd", Map.of())).status()).isEqualTo(404);
    }

    @Test
    void namesThatReadAlikeAreNeverReleasedFromThePage() {
        // a store can hold names as bytes that are not valid text: they read as U+FFFD, and two can read alike
        Lease lease = hold("bad\uFFFD");
        Console console = console(true);
        assertThat(console.handle(get("/", Map.of())).body()).doesNotContain("Release…");
        ConsoleResponse r = console.handle(post("/release", Map.of("name", "bad\uFFFD", "fence", Long.toString(lease.fence()),
                "csrf", CSRF.value()), null));
        assertThat(r.status()).isEqualTo(400);
        assertThat(lease.isHeld()).isTrue();
        Lease shown = hold("twice");
        LockStore doubled = new DescribedStore(store, "in-memory") {
            @Override
            public List<LockInfo> heldLocks() {
                List<LockInfo> all = new ArrayList<>(super.heldLocks());
                all.add(new LockInfo("twice", "someone-else", shown.fence() + 100, java.time.Instant.now(),
                        java.time.Instant.now().plusSeconds(60)));
                return all;
            }
        };
        try (Turnstile t = Turnstile.builder(doubled).build()) {
            Console c = Console.builder(t).actionsEnabled(true, "x").auditListener(audited::add).build();
            assertThat(c.handle(get("/release", Map.of("name", "twice"))).status()).isEqualTo(409);
            ConsoleResponse act = c.handle(post("/release", Map.of("name", "twice", "fence", Long.toString(shown.fence()),
                    "csrf", CSRF.value()), null));
            assertThat(act.status()).isEqualTo(409);
            assertThat(act.body()).contains("More than one lock reads as this name");
        }
        assertThat(shown.isHeld()).isTrue();
        assertThat(audited).isEmpty();
    }

    @Test
    void anEntryTheStoreCannotReadBackGivesA503NotAFailure() {
        LockStore broken = new DescribedStore(store, "redis://secret-host:6379") {
            @Override
            public List<LockInfo> heldLocks() {
                throw new NumberFormatException("For input string: \"99999999999999999999\"");
            }
        };
        try (Turnstile t = Turnstile.builder(broken).build()) {
            ConsoleResponse r = Console.builder(t).build().handle(get("/", Map.of()));
            assertThat(r.status()).isEqualTo(503);
            assertThat(r.body()).contains("cannot read").contains("data-reload").doesNotContain("99999").doesNotContain("secret-host");
            ConsoleResponse posted = Console.builder(t).actionsEnabled(true, "x").build().handle(post("/release",
                    Map.of("name", "a", "fence", "1", "csrf", CSRF.value()), null));
            assertThat(posted.status()).isEqualTo(503);
            assertThat(posted.body()).as("a reload would send the form again").doesNotContain("data-reload")
                    .contains("Nothing was released");
        }
    }

    @Test
    void timeLeftIsCountedByTheStoresClockWhereItHasOne() {
        Lease lease = hold("clocked");
        java.time.Instant storeTime = lease.expiresAt().minusSeconds(42);
        class ClockedStore extends DescribedStore implements dev.turnstile.spi.StoreClock {
            ClockedStore() {
                super(store, "jdbc:postgresql://db/app");
            }

            @Override
            public java.time.Instant now() {
                return storeTime;
            }
        }
        try (Turnstile t = Turnstile.builder(new ClockedStore()).build()) {
            String body = Console.builder(t).build().handle(get("/", Map.of())).body();
            assertThat(body).contains("store clock: <span id=\"store-clock\"><time datetime=\"" + storeTime
                    .truncatedTo(java.time.temporal.ChronoUnit.MILLIS)).contains(">42.0 s<");
        }
        assertThat(console(false).handle(get("/", Map.of())).body()).as("no clock, none shown").doesNotContain("store clock");
    }

    @Test
    void aClockDeclaredLaterIsUsedAndADownStoreIsAskedOnce() {
        java.util.concurrent.atomic.AtomicBoolean opened = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger clockReads = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean down = new java.util.concurrent.atomic.AtomicBoolean();
        class LazyStore extends DescribedStore implements dev.turnstile.spi.StoreClock {
            LazyStore() {
                super(store, "redis://lazy");
            }

            @Override
            public List<LockInfo> heldLocks() {
                if (down.get()) {
                    throw new StoreUnavailableException("down", null);
                }
                return super.heldLocks();
            }

            @Override
            public java.time.Instant now() {
                clockReads.incrementAndGet();
                return java.time.Instant.now();
            }

            // as the Spring starter's lazily opened store: no capability until the real store is open
            @Override
            public <C extends dev.turnstile.spi.StoreCapability> Optional<C> capability(Class<C> type) {
                return opened.get() ? super.capability(type) : Optional.empty();
            }
        }
        try (Turnstile t = Turnstile.builder(new LazyStore()).build()) {
            Console console = Console.builder(t).build();
            assertThat(console.handle(get("/", Map.of())).body()).doesNotContain("store clock");
            opened.set(true);
            assertThat(console.handle(get("/", Map.of())).body()).contains("store clock");
            int before = clockReads.get();
            down.set(true);
            assertThat(console.handle(get("/", Map.of())).status()).isEqualTo(503);
            assertThat(clockReads.get()).as("a store that is down is not asked for its clock too").isEqualTo(before);
        }
    }

    @Test
    void theAuditLineIsOneLineWhateverTheName() {
        ReleaseRecord rec = new ReleaseRecord("x' was not held by user ops\nfrom", true,
                "svc', fence 3) by user 'alice' from 10.9.9.9 at 2026 on PostgreSQL [\u202E", 3, "u'", "1.2.3.4",
                "console", java.time.Instant.EPOCH, "Redis");
        assertThat(rec.line()).isEqualTo("console: lock 'x\\' was not held by user ops\\nfrom' freed (held by 'svc\\', fence 3) "
                + "by user \\'alice\\' from 10.9.9.9 at 2026 on PostgreSQL [\\u202e', fence 3) by user 'u\\'' from 1.2.3.4 at "
                + "1970-01-01T00:00:00Z on Redis");
    }

    @Test
    void invisibleCharactersInEveryPlaneAreShownEscaped() {
        assertThat(Printable.of("nightly\uDB40\uDC01")).isEqualTo("nightly\\udb40\\udc01"); // U+E0001, a tag
        assertThat(Printable.of("a\u034Fb\uFE0Fc\u3164d")).isEqualTo("a\\u034fb\\ufe0fc\\u3164d");
        assertThat(Printable.of("\uD83D\uDE00 ok")).isEqualTo("\uD83D\uDE00 ok"); // an emoji is shown as itself
        assertThat(Printable.of("lone \uD800 x")).isEqualTo("lone \\ud800 x");
        assertThat(Printable.of("a\\b\n\t")).isEqualTo("a\\\\b\\n\\t");
        // unassigned (U+2065, U+FFF0), private use, and spaces that look like ' '
        assertThat(Printable.of("x\u2065y\uFFF0z\uE000")).isEqualTo("x\\u2065y\\ufff0z\\ue000");
        assertThat(Printable.of("a b\u00A0c\u3000d")).isEqualTo("a b\\u00a0c\\u3000d");
        hold("nightly\uDB40\uDC01");
        assertThat(console(false).handle(get("/", Map.of())).body()).contains("nightly\\udb40\\udc01");
    }

    @Test
    void anUnreachableStoreGivesA503WithoutItsDetails() {
        LockStore down = new DescribedStore(store, "redis://secret-host:6379") {
            @Override
            public List<LockInfo> heldLocks() {
                throw new StoreUnavailableException("cannot reach redis://secret-host:6379: connection refused", null);
            }
        };
        try (Turnstile t = Turnstile.builder(down).build()) {
            ConsoleResponse r = Console.builder(t).build().handle(get("/", Map.of()));
            assertThat(r.status()).isEqualTo(503);
            assertThat(r.body()).contains("Store unavailable").doesNotContain("secret-host");
        }
    }

    @Test
    void builderRejectsBadOptionsWithAMessage() {
        assertThatThrownBy(() -> Console.builder(null)).hasMessageContaining("turnstile is null");
        assertThatThrownBy(() -> Console.builder(turnstile).maxRows(0)).hasMessageContaining("give 1 to 100000");
        assertThatThrownBy(() -> Console.builder(turnstile).historySize(100_001)).hasMessageContaining("give 1 to 100000");
        assertThatThrownBy(() -> Console.builder(turnstile).storeLabel(" ")).hasMessageContaining("store label is empty");
        assertThatThrownBy(() -> Console.builder(turnstile).actionsEnabled(true, "")).hasMessageContaining("say how to enable");
    }

    @Test
    void historyKeepsTheNewestUpToItsSize() {
        Console console = Console.builder(turnstile).actionsEnabled(true, "x").historySize(2).build();
        for (int i = 0; i < 3; i++) {
            Lease l = hold("l" + i);
            console.handle(post("/release", Map.of("name", "l" + i, "fence", Long.toString(l.fence()), "csrf", CSRF.value()), null));
        }
        assertThat(console.history()).extracting(ReleaseRecord::name).containsExactly("l2", "l1");
    }

    /** A store that reports another description: what the label is made from. */
    private static class DescribedStore implements LockStore {
        private final LockStore inner;
        private final String description;

        DescribedStore(LockStore inner, String description) {
            this.inner = inner;
            this.description = description;
        }

        @Override
        public Optional<Grant> tryAcquire(AcquireRequest request) {
            return inner.tryAcquire(request);
        }

        @Override
        public boolean extend(String name, String token, Duration ttl) {
            return inner.extend(name, token, ttl);
        }

        @Override
        public boolean release(String name, String token, Duration lockAtLeastFor) {
            return inner.release(name, token, lockAtLeastFor);
        }

        @Override
        public List<LockInfo> heldLocks() {
            return inner.heldLocks();
        }

        @Override
        public boolean forceRelease(String name) {
            return inner.forceRelease(name);
        }

        @Override
        public String description() {
            return description;
        }
    }
}
