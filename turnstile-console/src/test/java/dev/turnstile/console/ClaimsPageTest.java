package dev.turnstile.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.Turnstile;
import dev.turnstile.claim.Claim;
import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimOutcome;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import dev.turnstile.jdbc.JdbcClaimStore;
import dev.turnstile.testing.InMemoryLockStore;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/** The claim tables page and the release of a stuck claim, on a real SQLite task table. */
class ClaimsPageTest {
    private static final ConsoleRequest.CsrfField CSRF = new ConsoleRequest.CsrfField("csrf", "s3cret-csrf-value");
    private static final String HOSTILE = "<script>alert('k')</script>\"&amp;";

    @TempDir Path dir;
    private final InMemoryLockStore locks = new InMemoryLockStore();
    private final Turnstile turnstile = Turnstile.builder(locks).build();
    private final List<ReleaseRecord> audited = new ArrayList<>();
    private final List<AutoCloseable> opened = new ArrayList<>();
    private SQLiteDataSource db = new SQLiteDataSource();
    private TaskClaimer claimer;
    private TaskClaimer other;
    /** When the tasks were inserted: gw-old's last progress is two hours before, the hostile key's one hour. */
    private long insertedAt;

    @BeforeEach
    void tasks() throws SQLException {
        db.setUrl("jdbc:sqlite:" + dir.resolve("tasks.db"));
        claimer = claimerOver(db, ClaimTable.builder("gateways").build(), Duration.ofMinutes(1));
        other = claimerOver(db, ClaimTable.builder("gateways").build(), Duration.ofMinutes(1));
        long now = System.currentTimeMillis();
        insertedAt = now;
        insert("gw-old", "Deleting", now - 7_200_000);
        insert(HOSTILE, "<b>Phase</b>", now - 3_600_000);
        insert("gw-fresh", "Deleting", now);
        insert("gw-free", "Creating", now - 9_000_000);
    }

    private TaskClaimer claimerOver(SQLiteDataSource ds, ClaimTable table, Duration timeout) {
        return claimerOver(JdbcClaimStore.builder(ds, table), timeout);
    }

    private TaskClaimer claimerOver(JdbcClaimStore.Builder builder, Duration timeout) {
        JdbcClaimStore store = builder.createTableIfMissing(true).build();
        TaskClaimer c = TaskClaimer.builder(store).lockTimeout(timeout).build();
        opened.add(0, store);
        opened.add(0, c);
        return c;
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : opened) {
            c.close();
        }
        turnstile.close();
        locks.close();
    }

    private void insert(String id, String phase, long updatedAt) throws SQLException {
        try (Connection c = db.getConnection();
                PreparedStatement ps = c.prepareStatement("INSERT INTO gateways (id, phase, updated_at) VALUES (?, ?, ?)")) {
            ps.setString(1, id);
            ps.setString(2, phase);
            ps.setLong(3, updatedAt);
            ps.executeUpdate();
        }
    }

    /** gw-old's last progress, as the page's link and form carry it. */
    private String old() {
        return Long.toString(insertedAt - 7_200_000);
    }

    private Console console(boolean actions, List<TaskClaimer> claimers) {
        return Console.builder(turnstile).actionsEnabled(actions, "enable them in the test.").auditListener(audited::add)
                .claimers(() -> claimers).build();
    }

    private static ConsoleRequest get(String path, Map<String, String> params) {
        return new ConsoleRequest("GET", path, params, "/base", "ops", "10.0.0.5", null, "console.test", CSRF, Map.of());
    }

    private static ConsoleRequest post(String path, Map<String, String> params) {
        return new ConsoleRequest("POST", path, params, "/base", "ops", "10.0.0.5", null, "console.test", CSRF, Map.of());
    }

    private List<Claim> claimAll() {
        List<Claim> out = new ArrayList<>(claimer.claim(ClaimFilter.where("phase", "Deleting"), 10));
        out.addAll(claimer.claim(ClaimFilter.where("phase", "<b>Phase</b>"), 10));
        return out;
    }

    @Test
    void showsCountsPerPhaseAndTheStuckTasksOldestFirstEscaped() {
        claimAll();
        ConsoleResponse r = console(false, List.of(claimer, other)).handle(get("/claims", Map.of()));
        assertThat(r.status()).isEqualTo(200);
        String body = r.body();
        assertThat(body).contains("Table gateways").contains("4 tasks in 3 phases").contains("lock timeout 1 min 0 s")
                .contains("stuck after 10 min 0 s");
        assertThat(body.split("<section", -1)).as("two claimers over one table: one table").hasSize(2);
        assertThat(body).contains("<td class=\"name\">Creating</td><td class=\"num\">1</td><td class=\"num\">1</td><td class=\"num\">0</td>")
                .contains("<td class=\"name\">Deleting</td><td class=\"num\">2</td><td class=\"num\">0</td><td class=\"num\">2</td>");
        assertThat(body.indexOf(">gw-old<")).isPositive().isLessThan(body.indexOf("&lt;script&gt;alert(&#39;k&#39;)&lt;/script&gt;"));
        assertThat(body).doesNotContain(">gw-fresh<").doesNotContain(">gw-free<")
                .doesNotContain("<script>alert").doesNotContain("<b>Phase").contains("&lt;b&gt;Phase&lt;/b&gt;")
                .doesNotContain("Release…");
        assertThat(console(true, List.of(claimer)).handle(get("/claims", Map.of())).body())
                .contains("href=\"/base/claims/release?table=gateways&amp;key=gw-old&amp;version=1&amp;updated=" + old() + "\"");
    }

    @Test
    void releasesAStuckClaimBehindAConfirmationAndCutsItsHolder() {
        Claim held = claimAll().stream().filter(c -> c.id().equals("gw-old")).findFirst().orElseThrow();
        Console console = console(true, List.of(claimer));
        ConsoleResponse confirm = console.handle(get("/claims/release", Map.of("table", "gateways", "key", "gw-old", "version", "1",
                "updated", old())));
        assertThat(confirm.status()).isEqualTo(200);
        assertThat(confirm.body()).contains("Release a stuck claim").contains(">gw-old<").contains("name=\"version\" value=\"1\"")
                .contains("name=\"csrf\" value=\"s3cret-csrf-value\"");
        ConsoleResponse done = console.handle(post("/claims/release", formFields(confirm.body())));
        assertThat(done.status()).isEqualTo(303);
        assertThat(held.heartbeat()).isEqualTo(ClaimOutcome.LOST);
        assertThat(other.claimNext(ClaimFilter.where("phase", "Deleting")).orElseThrow().id()).isEqualTo("gw-old");
        assertThat(audited).singleElement().satisfies(rec -> {
            assertThat(rec.claimTable()).isEqualTo("gateways");
            assertThat(rec.line()).startsWith("console: claim on task 'gw-old' of table 'gateways' released (claim version 1 cut) "
                    + "by user 'ops' from 10.0.0.5");
        });
        assertThat(console.handle(get("/history", Map.of())).body()).contains("task gw-old of table gateways");
        ConsoleResponse again = console.handle(post("/claims/release", formFields(confirm.body())));
        assertThat(again.status()).as("version 1 is not stuck any more").isEqualTo(409);
        assertThat(audited).hasSize(1);
    }

    @Test
    void refusesReleasesThatAreDisabledForgedStaleOrAmbiguous() throws Exception {
        Claim held = claimAll().stream().filter(c -> c.id().equals(HOSTILE)).findFirst().orElseThrow();
        String hostileUpdated = Long.toString(insertedAt - 3_600_000);
        Map<String, String> form = Map.of("table", "gateways", "key", Html.url(HOSTILE), "version", "1", "updated", hostileUpdated,
                "csrf", CSRF.value());
        assertThat(console(false, List.of(claimer)).handle(post("/claims/release", form)).status()).isEqualTo(403);
        Console console = console(true, List.of(claimer));
        assertThat(console.handle(post("/claims/release", Map.of("table", "gateways", "key", Html.url(HOSTILE), "version", "1",
                "updated", hostileUpdated)))
                .status()).as("no CSRF token").isEqualTo(403);
        assertThat(console.handle(post("/claims/release", Map.of("table", "gateways", "key", Html.url(HOSTILE), "version", "2",
                "updated", hostileUpdated,
                "csrf", CSRF.value()))).status()).as("a version it is not at").isEqualTo(409);
        assertThat(console.handle(post("/claims/release", Map.of("table", "tasks", "key", Html.url(HOSTILE), "version", "1",
                "updated", hostileUpdated,
                "csrf", CSRF.value()))).status()).isEqualTo(404);
        assertThat(console.handle(post("/claims/release", Map.of("table", "gateways", "key", Html.url(HOSTILE), "version", "x1",
                "updated", hostileUpdated,
                "csrf", CSRF.value()))).status()).isEqualTo(400);
        SQLiteDataSource elsewhere = new SQLiteDataSource();
        elsewhere.setUrl("jdbc:sqlite:" + dir.resolve("elsewhere.db"));
        TaskClaimer sameName = claimerOver(JdbcClaimStore.builder(elsewhere, ClaimTable.builder("gateways").build())
                .description("SQLite elsewhere"), Duration.ofMinutes(1));
        ConsoleResponse ambiguous = console(true, List.of(claimer, sameName)).handle(post("/claims/release", form));
        assertThat(ambiguous.status()).isEqualTo(409);
        assertThat(ambiguous.body()).contains("more than one store");
        assertThat(held.heartbeat()).isEqualTo(ClaimOutcome.APPLIED);
        assertThat(audited).isEmpty();
        ConsoleResponse ok = console.handle(post("/claims/release", form));
        assertThat(ok.status()).isEqualTo(303);
        assertThat(held.heartbeat()).isEqualTo(ClaimOutcome.LOST);
        assertThat(audited).singleElement().extracting(ReleaseRecord::line).asString()
                .contains("claim on task '<script>alert(\\'k\\')</script>\"&amp;' of table 'gateways'");
    }

    @Test
    void aTableThatCannotBeReadSaysSoAndLeavesTheOthersShown() throws SQLException {
        SQLiteDataSource broken = new SQLiteDataSource();
        broken.setUrl("jdbc:sqlite:" + dir.resolve("broken.db"));
        TaskClaimer gone = claimerOver(broken, ClaimTable.builder("jobs").build(), Duration.ofMinutes(1));
        try (Connection c = broken.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE jobs");
        }
        ConsoleResponse r = console(false, List.of(gone, claimer)).handle(get("/claims", Map.of()));
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).contains("Table jobs").contains("could not be read").contains("Table gateways")
                .contains("4 tasks in 3 phases");
    }

    /** The hidden fields of a page's form, as a browser would post them (character references decoded). */
    static Map<String, String> formFields(String body) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("<input type=\"hidden\" name=\"([^\"]*)\" value=\"([^\"]*)\">")
                .matcher(body);
        while (m.find()) {
            out.put(decode(m.group(1)), decode(m.group(2)));
        }
        return out;
    }

    private static String decode(String s) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("&#(\\d+);").matcher(s.replace("&lt;", "<").replace("&gt;", ">")
                .replace("&quot;", "\"").replace("&#39;", "'"));
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(b, java.util.regex.Matcher.quoteReplacement(String.valueOf((char) Integer.parseInt(m.group(1)))));
        }
        m.appendTail(b);
        return b.toString().replace("&amp;", "&");
    }

    @Test
    void theConfirmationPostsBackExactlyTheKeyItShowsWhateverItHolds() throws Exception {
        String odd = "C:\\tasks\\gw\u00a0\t7 & \"q\" <x> \u202e\u0096\r+%41";
        long oddUpdated = System.currentTimeMillis() - 3_600_000;
        insert(odd, "Deleting", oddUpdated);
        Claim held = claimAll().stream().filter(c -> c.id().equals(odd)).findFirst().orElseThrow();
        Console console = console(true, List.of(claimer));
        ConsoleResponse confirm = console.handle(get("/claims/release", Map.of("table", "gateways", "key", odd,
                "version", Long.toString(held.version()), "updated", Long.toString(oddUpdated))));
        assertThat(confirm.status()).as(confirm.body()).isEqualTo(200);
        assertThat(confirm.body()).contains("C:\\\\tasks").contains("\\u202e").doesNotContain("\u202e");
        Map<String, String> form = formFields(confirm.body());
        assertThat(form.get("key")).as("the key travels as ASCII, which a browser posts back as it got it")
                .matches("[\\x20-\\x7e]*").isEqualTo(Html.url(odd));
        ConsoleResponse done = console.handle(post("/claims/release", form));
        assertThat(done.status()).as(done.body()).isEqualTo(303);
        assertThat(held.heartbeat()).isEqualTo(ClaimOutcome.LOST);
        // a lock named with a backslash and a no-break space: the same round trip
        String lock = "C:\\jobs\u00a0nightly";
        dev.turnstile.Lease lease = turnstile.tryAcquire(lock).orElseThrow();
        ConsoleResponse lockConfirm = console.handle(get("/release", Map.of("name", lock)));
        assertThat(lockConfirm.status()).isEqualTo(200);
        ConsoleResponse freed = console.handle(post("/release", formFields(lockConfirm.body())));
        assertThat(freed.status()).as(freed.body()).isEqualTo(303);
        assertThat(locks.heldLocks()).extracting(dev.turnstile.LockInfo::name).doesNotContain(lock);
        assertThat(audited).extracting(ReleaseRecord::name).contains(lock);
        lease.release();
    }

    @Test
    void nullPhasesNullLockedAtAndUnsetUpdatedAtAreShownForWhatTheyAre() throws Exception {
        try (Connection c = db.getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE loose (id TEXT PRIMARY KEY, phase TEXT, locked_at INTEGER, updated_at INTEGER NOT NULL "
                    + "DEFAULT 0, claim_version INTEGER NOT NULL DEFAULT 0)");
            st.execute("CREATE INDEX loose_claim_idx ON loose (phase, locked_at, updated_at)");
            long now = System.currentTimeMillis();
            st.execute("INSERT INTO loose (id, phase, locked_at) VALUES ('no-phase', NULL, 0)");
            st.execute("INSERT INTO loose (id, phase, locked_at) VALUES ('null-locked', 'P', NULL)");
            st.execute("INSERT INTO loose (id, phase, locked_at, claim_version) VALUES ('never-updated', 'P', " + now + ", 1)");
        }
        TaskClaimer loose = claimerOver(db, ClaimTable.builder("loose").build(), Duration.ofMinutes(1));
        String body = console(true, List.of(loose)).handle(get("/claims", Map.of())).body();
        assertThat(body).contains("<td class=\"name\"><span class=\"muted\">none</span></td><td class=\"num\">1</td><td class=\"num\">1</td>")
                .contains("<td class=\"name\">P</td><td class=\"num\">2</td><td class=\"num\">0</td><td class=\"num\">1</td><td class=\"num\">0</td>")
                .contains("1 task can never be claimed: a NULL lockedAt")
                .contains("No stuck tasks.");
    }

    @Test
    void keysThatReadAsReplacementCharactersAndForeignDigitsAreNeverReleased() throws Exception {
        String unreadable = "job\uFFFD";
        long unreadableUpdated = System.currentTimeMillis() - 3_600_000;
        insert(unreadable, "Deleting", unreadableUpdated);
        Claim held = claimAll().stream().filter(c -> c.id().equals(unreadable)).findFirst().orElseThrow();
        Console console = console(true, List.of(claimer));
        String page = console.handle(get("/claims", Map.of())).body();
        assertThat(page).contains("release-claim").doesNotContain("key=job%EF%BF%BD");
        ConsoleResponse r = console.handle(post("/claims/release", Map.of("table", "gateways", "key", Html.url(unreadable),
                "version", Long.toString(held.version()), "updated", Long.toString(unreadableUpdated), "csrf", CSRF.value())));
        assertThat(r.status()).isEqualTo(409);
        assertThat(r.body()).contains("not valid text");
        ConsoleResponse fullWidth = console.handle(post("/claims/release", Map.of("table", "gateways", "key", "gw-old",
                "version", "\uFF11", "updated", old(), "csrf", CSRF.value())));
        assertThat(fullWidth.status()).as("a full-width 1 is not a version").isEqualTo(400);
        assertThat(held.heartbeat()).isEqualTo(ClaimOutcome.APPLIED);
        assertThat(audited).isEmpty();
    }

    /** The page showed one last progress; progress since, even while the task stays stuck, means look again. */
    @Test
    void progressAfterTheConfirmationWasShownRefusesTheRelease() throws Exception {
        Claim held = claimAll().stream().filter(c -> c.id().equals("gw-old")).findFirst().orElseThrow();
        Console console = console(true, List.of(claimer));
        ConsoleResponse confirm = console.handle(get("/claims/release", Map.of("table", "gateways", "key", "gw-old", "version", "1",
                "updated", old())));
        assertThat(confirm.status()).isEqualTo(200);
        try (Connection c = db.getConnection(); Statement st = c.createStatement()) {
            // a minute of progress, and still older than the threshold: still stuck, at the same version
            st.execute("UPDATE gateways SET updated_at = updated_at + 60000 WHERE id = 'gw-old'");
        }
        ConsoleResponse r = console.handle(post("/claims/release", formFields(confirm.body())));
        assertThat(r.status()).isEqualTo(409);
        assertThat(held.heartbeat()).isEqualTo(ClaimOutcome.APPLIED);
        assertThat(audited).isEmpty();
        ConsoleResponse noUpdated = console.handle(post("/claims/release", Map.of("table", "gateways", "key", "gw-old",
                "version", "1", "csrf", CSRF.value())));
        assertThat(noUpdated.status()).isEqualTo(400);
    }

    @Test
    void withoutClaimersThePageSaysHowToGetOne() {
        assertThat(console(false, List.of()).handle(get("/claims", Map.of())).body()).contains("No claim tables are known")
                .contains("--claim-table");
    }

    @Test
    void stuckAfterIsCheckedAndUsed() {
        assertThatThrownBy(() -> Console.builder(turnstile).stuckAfter(Duration.ofMillis(10)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 second to 366 days");
        claimAll();
        String body = Console.builder(turnstile).claimers(() -> List.of(claimer)).stuckAfter(Duration.ofHours(1).plusMinutes(30))
                .build().handle(get("/claims", Map.of())).body();
        assertThat(body).contains("stuck after 1 h 30 min").contains(">gw-old<").doesNotContain("alert(&#39;k");
    }

}
