package dev.turnstile.console;

import dev.turnstile.LockInfo;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import dev.turnstile.claim.ClaimSummary;
import dev.turnstile.claim.TaskClaimer;
import dev.turnstile.leader.Leadership;
import dev.turnstile.spi.StoreClock;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The console's pages, rendered from a {@link ConsoleRequest}: the locks a store holds (filtered,
 * refreshing itself), a force-release behind a confirmation when actions are enabled, and the
 * history of forced releases made through this console. It knows no web framework: a server
 * ({@link ConsoleServer}, or the Spring Boot starter) authenticates the user, checks its CSRF token
 * where it has its own, and passes each request to {@link #handle}.
 *
 * <p>What it promises: every name, holder and message is HTML-escaped; no store URL, host or
 * password is shown (the store by its kind only); a {@code POST} is refused unless actions are
 * enabled, it carries the request's CSRF token, and its {@code Origin}, when sent, is the console's
 * own; a release cuts only the holding the confirmation showed (same fence). Thread-safe.
 */
public final class Console {
    /** Added by the server to every response: no framing, no sniffing, no caching, scripts and styles from the console only. */
    public static final Map<String, String> SECURITY_HEADERS = Map.of(
            "Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                    + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            "X-Content-Type-Options", "nosniff",
            "X-Frame-Options", "DENY",
            // same-origin, not no-referrer: under no-referrer a browser sends "Origin: null" with the console's own forms
            "Referrer-Policy", "same-origin",
            "Cache-Control", "no-store");

    private static final Logger audit = LoggerFactory.getLogger("dev.turnstile.console.audit");
    private static final Logger log = LoggerFactory.getLogger(Console.class);
    /** The least "stuck after" the console judges by when it is not given one: a few heartbeats missed is not stuck. */
    private static final Duration MIN_STUCK_AFTER = Duration.ofMinutes(1);

    private final Turnstile turnstile;
    private final boolean actionsEnabled;
    private final String actionsDisabledHint;
    private final String storeLabel;
    private final int maxRows;
    private final int historySize;
    private final Clock clock;
    private final Consumer<ReleaseRecord> auditListener;
    private final @Nullable JobHistory jobs;
    private final Supplier<? extends Collection<String>> roles;
    private final Supplier<? extends Collection<Leadership>> leaderships;
    private final Supplier<? extends Collection<TaskClaimer>> claimers;
    private final Supplier<? extends Map<String, Instant>> nextTicks;
    private final @Nullable Duration stuckAfter;
    /** Whether a failed read of the store's clock was logged at WARN already (once is enough; then DEBUG). */
    private final java.util.concurrent.atomic.AtomicBoolean clockFailureLogged = new java.util.concurrent.atomic.AtomicBoolean();
    private final ArrayDeque<ReleaseRecord> history = new ArrayDeque<>(); // guarded by itself
    /** The last failure logged at WARN per claim table, so a page that refreshes does not repeat it. */
    private final Map<String, String> tableFailures = new java.util.concurrent.ConcurrentHashMap<>();

    private Console(Builder b) {
        this.turnstile = b.turnstile;
        this.actionsEnabled = b.actionsEnabled;
        this.actionsDisabledHint = b.actionsDisabledHint;
        this.storeLabel = b.storeLabel != null ? b.storeLabel : StoreLabel.of(b.turnstile.store().description());
        this.maxRows = b.maxRows;
        this.historySize = b.historySize;
        this.clock = b.clock;
        this.auditListener = b.auditListener;
        this.jobs = b.jobs;
        this.roles = b.roles;
        this.leaderships = b.leaderships;
        this.claimers = b.claimers;
        this.nextTicks = b.nextTicks;
        this.stuckAfter = b.stuckAfter;
    }

    /**
     * Starts a builder.
     *
     * @param turnstile the client whose store the console shows and releases on
     * @return a builder; actions are disabled unless {@link Builder#actionsEnabled} says otherwise
     * @throws IllegalArgumentException if {@code turnstile} is null
     */
    public static Builder builder(Turnstile turnstile) {
        if (turnstile == null) {
            throw new IllegalArgumentException("turnstile is null: give the client whose store the console shows");
        }
        return new Builder(turnstile);
    }

    /**
     * Whether this console offers force-release.
     *
     * @return {@code true} if actions are enabled
     */
    public boolean actionsEnabled() {
        return actionsEnabled;
    }

    /**
     * The store as the pages name it: its kind, never its URL.
     *
     * @return e.g. {@code PostgreSQL}, {@code Redis}
     */
    public String storeLabel() {
        return storeLabel;
    }

    /**
     * The forced releases made through this console since it started, newest first (at most the
     * history size given to the builder).
     *
     * @return a copy
     */
    public List<ReleaseRecord> history() {
        synchronized (history) {
            return List.copyOf(history);
        }
    }

    /**
     * Answers one request. Never throws for anything a request can hold: bad input gets a page that
     * says what to fix, a store that cannot be reached a 503 page (the cause goes to the log, not to
     * the page, as it may name hosts).
     *
     * @param r the request
     * @return the response
     */
    public ConsoleResponse handle(ConsoleRequest r) {
        try {
            return route(r);
        } catch (RuntimeException e) {
            // unreachable, not set up (no lock table), closed, or an entry the store cannot read back:
            // the cause may name hosts and tables, so it goes to the log only
            log.warn("console: reading the store failed: {}", Printable.of(e.toString()));
            boolean get = r.method().equalsIgnoreCase("GET") || r.method().equalsIgnoreCase("HEAD");
            // a page asked for again by itself: a reload of a POST would ask to send the form again
            return page(r, 503, "Store unavailable", "", Layout.message("Store unavailable",
                    "The store did not answer, or answered something the console cannot read (the console's log says "
                            + "why). " + (get ? "The page tries again by itself." : "Nothing was released; try again."))
                    + (get ? "<div id=\"live\" data-refresh=\"5\" data-reload=\"\"></div>" : ReleasePages.back(r)));
        }
    }

    private ConsoleResponse route(ConsoleRequest r) {
        String method = r.method().toUpperCase(Locale.ROOT);
        String path = r.path();
        if (path.startsWith("/static/")) {
            return method.equals("GET") || method.equals("HEAD") ? StaticFiles.get(path.substring("/static/".length()))
                    : notAllowed(r, "GET");
        }
        switch (path) {
            case "", "/" -> {
                return method.equals("GET") || method.equals("HEAD") ? locks(r) : notAllowed(r, "GET");
            }
            case "/history" -> {
                return method.equals("GET") || method.equals("HEAD") ? historyPage(r) : notAllowed(r, "GET");
            }
            case "/jobs" -> {
                return method.equals("GET") || method.equals("HEAD")
                        ? page(r, 200, "Jobs", "/jobs", JobsPage.body(jobs, nextTicks.get(), turnstile.owner(), clock.instant()))
                        : notAllowed(r, "GET");
            }
            case "/leaders" -> {
                if (!method.equals("GET") && !method.equals("HEAD")) {
                    return notAllowed(r, "GET");
                }
                List<LockInfo> held = turnstile.heldLocks();
                Instant storeNow = storeNow();
                return page(r, 200, "Leadership", "/leaders", storeNow, LeadersPage.body(roles.get(), leaderships.get(),
                        held, storeNow != null ? storeNow : clock.instant()));
            }
            case "/claims" -> {
                return method.equals("GET") || method.equals("HEAD")
                        ? page(r, 200, "Claims", "/claims", ClaimsPage.body(r, claimTables(), clock.instant(), actionsEnabled))
                        : notAllowed(r, "GET");
            }
            case "/claims/release" -> {
                if (method.equals("GET") || method.equals("HEAD")) {
                    return confirmClaimRelease(r);
                }
                return method.equals("POST") ? releaseClaim(r) : notAllowed(r, "GET, POST");
            }
            case "/release" -> {
                if (method.equals("GET") || method.equals("HEAD")) {
                    return confirm(r);
                }
                return method.equals("POST") ? release(r) : notAllowed(r, "GET, POST");
            }
            default -> {
                return page(r, 404, "Not found", "", Layout.message("Not found", "There is no page '" + path + "' here.")
                        + ReleasePages.back(r));
            }
        }
    }

    private ConsoleResponse locks(ConsoleRequest r) {
        List<LockInfo> held = turnstile.heldLocks(); // first: a store that is down fails here, once, not twice
        Instant storeNow = storeNow();
        return page(r, 200, "Locks", "/", storeNow,
                LocksPage.body(r, held, storeNow != null ? storeNow : clock.instant(), maxRows, actionsEnabled));
    }

    /**
     * The store's clock where it reads one (the SQL stores, Redis): "time left" is counted by it, as
     * the store counts the lease; null where it has none (or did not answer): the console's then.
     */
    private @Nullable Instant storeNow() {
        // asked on every page: a store opened lazily (Spring, the store down at start-up) declares it later
        StoreClock storeClock = turnstile.store().capability(StoreClock.class).orElse(null);
        if (storeClock == null) {
            return null;
        }
        try {
            return storeClock.now();
        } catch (RuntimeException e) {
            if (clockFailureLogged.compareAndSet(false, true)) {
                log.warn("console: the store's clock could not be read ({}); times left are counted by the console's clock",
                        e.toString());
            } else {
                log.debug("console: the store's clock could not be read: {}", e.toString());
            }
            return null;
        }
    }

    /** Each claim table once, each read on its own. */
    private List<ClaimsPage.Table> claimTables() {
        List<ClaimsPage.Table> out = new ArrayList<>();
        for (TaskClaimer c : claimers.get().stream().filter(distinctTables()).toList()) {
            Duration after = stuckAfterFor(c);
            ClaimSummary summary = null;
            String problem = null;
            String table = c.store().table().table();
            try {
                summary = c.store().summarize(c.lockTimeout(), after, ClaimsPage.MAX_STUCK);
                tableFailures.remove(table);
            } catch (UnsupportedOperationException e) {
                problem = "This claim store cannot summarize its table.";
            } catch (RuntimeException e) {
                // the first line (a schema error carries the DDL that fixes it), at WARN once per failure:
                // the page asks again every 5 s
                String first = Printable.of(e.toString().lines().findFirst().orElse(""));
                if (!first.equals(tableFailures.put(table, first))) {
                    log.warn("console: reading claim table '{}' failed: {}", table, first);
                } else {
                    log.debug("console: reading claim table '{}' failed again: {}", table, first);
                }
                problem = "The table could not be read (the console's log says why); the page tries again by itself.";
            }
            out.add(new ClaimsPage.Table(c, after, summary, problem));
        }
        return out;
    }

    /** The threshold given to the builder, else ten lock timeouts: a task that saw ten of them pass without progress. */
    private Duration stuckAfterFor(TaskClaimer c) {
        if (stuckAfter != null) {
            return stuckAfter;
        }
        Duration tenTimeouts = c.lockTimeout().multipliedBy(10);
        return tenTimeouts.compareTo(MIN_STUCK_AFTER) < 0 ? MIN_STUCK_AFTER : tenTimeouts;
    }

    /** The stuck task a claim-release form or link names, with its claimer, or the page that says why there is none. */
    private record StuckClaim(@Nullable TaskClaimer claimer, ClaimSummary.@Nullable StuckTask task, @Nullable Instant now,
            @Nullable ConsoleResponse refusal) {}

    private StuckClaim stuckClaim(ConsoleRequest r) {
        String table = r.parameters().get("table");
        // the confirmation's form sends the key percent-encoded (see ClaimsPage); a link's query, as it is
        String key = r.method().equalsIgnoreCase("POST") ? percentDecoded(r.parameters().get("key")) : r.parameters().get("key");
        Optional<Long> version = ReleasePages.number(r, "version");
        // the last progress the page showed (epoch ms): progress since then, even while the task stays stuck, means look again
        Optional<Long> updated = ReleasePages.number(r, "updated");
        if (table == null || key == null || version.isEmpty() || updated.isEmpty()) {
            return refusal(page(r, 400, "Bad request", "", Layout.message("Bad request", "Give the claim table as 'table', the "
                    + "task's key as 'key', its claim version as 'version' and its last progress as 'updated': use the "
                    + "Release link of the claim tables page.") + ClaimsPage.back(r)));
        }
        List<TaskClaimer> over = claimers.get().stream().filter(c -> c.store().table().table().equals(table))
                .filter(distinctTables()).toList();
        if (over.size() != 1) {
            return refusal(page(r, over.isEmpty() ? 404 : 409, "No such table", "", Layout.message(over.isEmpty()
                    ? "No such claim table" : "More than one claim table has this name", over.isEmpty()
                    ? "This console knows no claim table '" + table + "'."
                    : "Claim tables of more than one store are named '" + table + "', so a release could hit the other one. "
                            + "Nothing was released; release it in the store itself.") + ClaimsPage.back(r)));
        }
        TaskClaimer claimer = over.get(0);
        ClaimSummary summary;
        try {
            summary = claimer.store().summarize(claimer.lockTimeout(), stuckAfterFor(claimer), ClaimsPage.MAX_STUCK);
        } catch (UnsupportedOperationException e) {
            return refusal(cannotRelease(r, table));
        }
        List<ClaimSummary.StuckTask> matches = summary.stuck().stream()
                .filter(t -> t.keyText().equals(key) && t.version() == version.get()
                        && t.updatedAt().toEpochMilli() == updated.get()).toList();
        if (matches.size() > 1) {
            return refusal(page(r, 409, "Ambiguous", "", Layout.message("More than one task reads as this key", "Table '" + table
                    + "' has more than one stuck task whose key reads as '" + key + "'. Nothing was released; release it in "
                    + "the store itself.") + ClaimsPage.back(r)));
        }
        if (matches.size() == 1 && !ClaimsPage.releasable(matches.get(0))) {
            return refusal(page(r, 409, "Not releasable", "", Layout.message("This key is not valid text", "Task '" + key
                    + "' of table '" + table + "' has a key that is not valid text where the console reads it, so a release "
                    + "could name another task. Nothing was released; release it in the store itself.") + ClaimsPage.back(r)));
        }
        if (matches.isEmpty()) {
            return refusal(page(r, 409, "Changed", "", Layout.message("The task changed", "Task '" + key + "' of table '" + table
                    + "' is not stuck at claim version " + version.get() + " as shown any more: it made progress, was claimed again "
                    + "or released, or is gone. Nothing was released; look again before you release it.") + ClaimsPage.back(r)));
        }
        return new StuckClaim(claimer, matches.get(0), summary.storeNow() != null ? summary.storeNow() : clock.instant(), null);
    }

    private static @Nullable String percentDecoded(@Nullable String s) {
        if (s == null) {
            return null;
        }
        try {
            return java.net.URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null; // a malformed escape: the request is refused as one without a key
        }
    }

    private static StuckClaim refusal(ConsoleResponse page) {
        return new StuckClaim(null, null, null, page);
    }

    /**
     * One claimer per table: claimers whose stores describe themselves alike over a table of one
     * name are taken for one table (an application often builds a store per claimer over one
     * database); stores that describe themselves apart are different tables.
     */
    private static java.util.function.Predicate<TaskClaimer> distinctTables() {
        java.util.Set<List<String>> seen = new java.util.HashSet<>();
        return c -> seen.add(List.of(c.store().description(), c.store().table().table()));
    }

    private ConsoleResponse confirmClaimRelease(ConsoleRequest r) {
        if (!actionsEnabled) {
            return disabled(r);
        }
        StuckClaim s = stuckClaim(r);
        if (s.refusal() != null) {
            return s.refusal();
        }
        TaskClaimer c = Objects.requireNonNull(s.claimer());
        return page(r, 200, "Release a claim", "/claims", ClaimsPage.confirmation(r, c.store().table().table(),
                Objects.requireNonNull(s.task()), c.lockTimeout(), Objects.requireNonNull(s.now())));
    }

    private ConsoleResponse releaseClaim(ConsoleRequest r) {
        if (!actionsEnabled) {
            return disabled(r);
        }
        String refused = refusedAction(r);
        if (refused != null) {
            return page(r, 403, "Refused", "", Layout.message("Refused", refused) + ClaimsPage.back(r));
        }
        StuckClaim s = stuckClaim(r);
        if (s.refusal() != null) {
            return s.refusal();
        }
        TaskClaimer c = Objects.requireNonNull(s.claimer());
        ClaimSummary.StuckTask task = Objects.requireNonNull(s.task());
        String table = c.store().table().table();
        boolean freed;
        try {
            freed = c.store().release(task);
        } catch (UnsupportedOperationException e) {
            return cannotRelease(r, table);
        } catch (dev.turnstile.StoreSchemaException e) {
            // the key matched more than one row: the store rolled back
            log.warn("console: release in claim table '{}' refused: {}", table, Printable.of(String.valueOf(e.getMessage())));
            return page(r, 409, "Not released", "", Layout.message("Not released", "Task '" + task.keyText() + "' of table '"
                    + table + "' is more than one row (its id is not unique), so nothing was released: give the id column a "
                    + "unique index.") + ClaimsPage.back(r));
        }
        record(new ReleaseRecord(task.keyText(), freed, null, task.version(), r.user() != null ? r.user() : "anonymous",
                r.remoteAddress(), "console", clock.instant(), storeLabel, table));
        if (!freed) {
            // unlocked, moved on or claimed again between the check and the write: the holder wins
            return page(r, 409, "Changed", "", Layout.message("The task changed", "Task '" + task.keyText() + "' of table '"
                    + table + "' changed just before the release (it was unlocked, moved on or claimed again): nothing was "
                    + "released. Look again before you release it.") + ClaimsPage.back(r));
        }
        return ConsoleResponse.redirect(r.basePath() + "/history");
    }

    private ConsoleResponse cannotRelease(ConsoleRequest r, String table) {
        return page(r, 501, "Not supported", "", Layout.message("Not supported", "The claim store of table '" + table
                + "' cannot release claims. Nothing was released.") + ClaimsPage.back(r));
    }

    private ConsoleResponse confirm(ConsoleRequest r) {
        if (!actionsEnabled) {
            return disabled(r);
        }
        Optional<String> name = lockName(r);
        if (name.isEmpty()) {
            return badName(r);
        }
        List<LockInfo> held = held(name.get());
        Instant storeNow = storeNow();
        if (held.size() > 1) {
            return ambiguous(r, name.get());
        }
        return page(r, 200, "Release", "/", storeNow, ReleasePages.confirmation(r, name.get(), held.isEmpty() ? null : held.get(0),
                storeNow != null ? storeNow : clock.instant()));
    }

    private ConsoleResponse release(ConsoleRequest r) {
        if (!actionsEnabled) {
            return disabled(r);
        }
        String refused = refusedAction(r);
        if (refused != null) {
            return page(r, 403, "Refused", "", Layout.message("Refused", refused) + ReleasePages.back(r));
        }
        Optional<String> name = lockName(r);
        if (name.isEmpty()) {
            return badName(r);
        }
        Optional<Long> fence = ReleasePages.expectedFence(r);
        if (fence.isEmpty()) {
            return page(r, 400, "Bad request", "", Layout.message("Bad request", "The form carried no fence: release from "
                    + "the confirmation page, which says whose holding is cut.") + ReleasePages.back(r));
        }
        List<LockInfo> matches = held(name.get());
        if (matches.size() > 1) {
            return ambiguous(r, name.get());
        }
        LockInfo held = matches.isEmpty() ? null : matches.get(0);
        if (held == null || held.fence() != fence.get()) {
            String now = held == null ? "it is not held any more" : "it is held by " + held.owner() + " with fence " + held.fence();
            return page(r, 409, "Changed", "", Layout.message("The lock changed", "Lock '" + name.get() + "' is not held with "
                    + "fence " + fence.get() + " any more: " + now + ". Nothing was released; look again before you release it.")
                    + ReleasePages.back(r));
        }
        boolean freed = turnstile.forceRelease(name.get());
        ReleaseRecord rec = new ReleaseRecord(name.get(), freed, freed ? held.owner() : null, freed ? held.fence() : -1,
                r.user() != null ? r.user() : "anonymous", r.remoteAddress(), "console", clock.instant(), storeLabel);
        record(rec);
        return ConsoleResponse.redirect(r.basePath() + "/history");
    }

    private void record(ReleaseRecord rec) {
        audit.warn(rec.line());
        synchronized (history) {
            history.addFirst(rec);
            while (history.size() > historySize) {
                history.removeLast();
            }
        }
        try {
            auditListener.accept(rec);
        } catch (RuntimeException e) {
            log.warn("console: the audit listener failed for '{}'", Printable.of(rec.name()), e);
        }
    }

    /**
     * Why an action request is refused, or null if it may go on: the CSRF token must match, and
     * a browser's {@code Origin} must be this console's own host.
     */
    private static @Nullable String refusedAction(ConsoleRequest r) {
        ConsoleRequest.CsrfField csrf = r.csrf();
        if (csrf == null) {
            return "This server gives the console no CSRF token, so it refuses every action.";
        }
        String sent = r.parameters().get(csrf.name());
        if (sent == null || !MessageDigest.isEqual(sent.getBytes(StandardCharsets.UTF_8), csrf.value().getBytes(StandardCharsets.UTF_8))) {
            return "The form's CSRF token is missing or not this session's (a page from before a sign-in, or another site's form): "
                    + "reload the page and try again.";
        }
        String origin = r.origin();
        if (origin != null && !origin.equals("null") && !sameHost(origin, r.host())) {
            return "The request came from another site (Origin " + origin + "): actions are taken from the console's own pages only.";
        }
        return null;
    }

    private static boolean sameHost(String origin, @Nullable String host) {
        if (host == null) {
            return false;
        }
        try {
            URI o = URI.create(origin);
            String authority = o.getRawAuthority();
            return authority != null && authority.equalsIgnoreCase(host);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private Optional<String> lockName(ConsoleRequest r) {
        String name = r.parameters().get("name");
        return name != null && ReleasePages.releasable(name) ? Optional.of(name) : Optional.empty();
    }

    /** The held locks that read as this name: one, or none; more when the store holds names that are not valid text. */
    private List<LockInfo> held(String name) {
        return turnstile.heldLocks().stream().filter(l -> l.name().equals(name)).toList();
    }

    private ConsoleResponse ambiguous(ConsoleRequest r, String name) {
        return page(r, 409, "Ambiguous", "", Layout.message("More than one lock reads as this name", "The store holds more "
                + "than one lock that reads as '" + name + "' (names stored as bytes that are not all valid text read "
                + "alike), so a release could free another than the one you see. Nothing was released; release it in the "
                + "store itself.") + ReleasePages.back(r));
    }

    private ConsoleResponse badName(ConsoleRequest r) {
        return page(r, 400, "Bad request", "", Layout.message("Bad request", "Give the lock's name as the 'name' "
                + "parameter: a valid lock name (1 to 255 characters, no control characters, not starting or ending "
                + "with white space, in Unicode normalization form C).") + ReleasePages.back(r));
    }

    private ConsoleResponse disabled(ConsoleRequest r) {
        return page(r, 403, "Actions disabled", "", Layout.message("Actions disabled",
                "This console is read-only: " + actionsDisabledHint) + ReleasePages.back(r));
    }

    private ConsoleResponse notAllowed(ConsoleRequest r, String allowed) {
        ConsoleResponse p = page(r, 405, "Method not allowed", "", Layout.message("Method not allowed",
                r.method() + " is not allowed here; use " + allowed + "."));
        return new ConsoleResponse(405, p.contentType(), Map.of("Allow", allowed), p.body());
    }

    private ConsoleResponse historyPage(ConsoleRequest r) {
        return page(r, 200, "History", "/history", HistoryPage.body(history(), historySize));
    }

    private ConsoleResponse page(ConsoleRequest r, int status, String title, String current, String body) {
        return page(r, status, title, current, null, body);
    }

    private ConsoleResponse page(ConsoleRequest r, int status, String title, String current, @Nullable Instant storeNow,
            String body) {
        return ConsoleResponse.html(status, Layout.page(r, title, current, storeLabel, clock.instant(), storeNow, body));
    }

    /** The console's script and style sheet, kept in the jar beside this class. */
    static final class StaticFiles {
        private static final Map<String, String> TYPES = Map.of(
                "console.css", "text/css; charset=utf-8", "console.js", "text/javascript; charset=utf-8");
        private static final Map<String, String> FILES = load();

        private StaticFiles() {}

        static ConsoleResponse get(String file) {
            String body = FILES.get(file);
            if (body == null) {
                return new ConsoleResponse(404, "text/plain; charset=utf-8", Map.of(), "not found");
            }
            return new ConsoleResponse(200, Objects.requireNonNull(TYPES.get(file)), Map.of(), body);
        }

        private static Map<String, String> load() {
            Map<String, String> files = new java.util.HashMap<>();
            for (String name : TYPES.keySet()) {
                try (InputStream in = Console.class.getResourceAsStream(name)) {
                    if (in == null) {
                        throw new IllegalStateException("the console's " + name + " is missing from its jar");
                    }
                    files.put(name, new String(in.readAllBytes(), StandardCharsets.UTF_8));
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read the console's " + name, e);
                }
            }
            return Map.copyOf(files);
        }
    }

    /** Options for a {@link Console}. */
    public static final class Builder {
        private final Turnstile turnstile;
        private boolean actionsEnabled;
        private String actionsDisabledHint = "actions are not enabled.";
        private @Nullable String storeLabel;
        private int maxRows = 500;
        private int historySize = 200;
        private Clock clock = Clock.systemUTC();
        private Consumer<ReleaseRecord> auditListener = rec -> {};
        private @Nullable JobHistory jobs;
        private Supplier<? extends Collection<String>> roles = List::of;
        private Supplier<? extends Collection<Leadership>> leaderships = List::of;
        private Supplier<? extends Collection<TaskClaimer>> claimers = List::of;
        private Supplier<? extends Map<String, Instant>> nextTicks = Map::of;
        private @Nullable Duration stuckAfter;

        private Builder(Turnstile turnstile) {
            this.turnstile = turnstile;
        }

        /**
         * Enables force-release. Off by default: the console is read-only.
         *
         * @param enabled whether actions are offered
         * @param hintWhenDisabled what a refused action's page tells the user to do to enable them,
         *     e.g. {@code "start turnstile console with --allow-release."}
         * @return this builder
         * @throws IllegalArgumentException if the hint is null or blank
         */
        public Builder actionsEnabled(boolean enabled, String hintWhenDisabled) {
            if (hintWhenDisabled == null || hintWhenDisabled.isBlank()) {
                throw new IllegalArgumentException("hintWhenDisabled is empty: say how to enable actions");
            }
            this.actionsEnabled = enabled;
            this.actionsDisabledHint = hintWhenDisabled;
            return this;
        }

        /**
         * Names the store on every page. Default: its kind, from its description (never its URL).
         *
         * @param label e.g. {@code "PostgreSQL (orders)"}
         * @return this builder
         * @throws IllegalArgumentException if the label is null or blank
         */
        public Builder storeLabel(String label) {
            if (label == null || label.isBlank()) {
                throw new IllegalArgumentException("store label is empty: give a name for the store, or leave the default");
            }
            this.storeLabel = label;
            return this;
        }

        /**
         * The most rows the locks page lays out; more are counted and left to the filter. Default 500.
         *
         * @param rows 1 to 100,000
         * @return this builder
         * @throws IllegalArgumentException if out of range
         */
        public Builder maxRows(int rows) {
            if (rows < 1 || rows > 100_000) {
                throw new IllegalArgumentException("maxRows is " + rows + ": give 1 to 100000");
            }
            this.maxRows = rows;
            return this;
        }

        /**
         * How many forced releases the history page keeps (in memory: the log keeps them all). Default 200.
         *
         * @param size 1 to 100,000
         * @return this builder
         * @throws IllegalArgumentException if out of range
         */
        public Builder historySize(int size) {
            if (size < 1 || size > 100_000) {
                throw new IllegalArgumentException("historySize is " + size + ": give 1 to 100000");
            }
            this.historySize = size;
            return this;
        }

        /**
         * Told of every forced release, after it was logged (e.g. to send it to syslog). One that
         * throws is logged and ignored.
         *
         * @param listener the listener
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder auditListener(Consumer<ReleaseRecord> listener) {
            if (listener == null) {
                throw new IllegalArgumentException("audit listener is null");
            }
            this.auditListener = listener;
            return this;
        }

        /**
         * The job history the jobs page shows: register the same {@link JobHistory} as a listener
         * on the application's {@code JobRunner}. Without one, the jobs page says how to get one.
         *
         * @param history the history
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder jobs(JobHistory history) {
            if (history == null) {
                throw new IllegalArgumentException("job history is null");
            }
            this.jobs = history;
            return this;
        }

        /**
         * Roles the leadership page shows by their lock names alone (who leads now, which term),
         * for roles this process does not stand for itself ({@code turnstile console --role}).
         *
         * @param roles read at each page view
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder roles(Supplier<? extends Collection<String>> roles) {
            if (roles == null) {
                throw new IllegalArgumentException("roles is null");
            }
            this.roles = roles;
            return this;
        }

        /**
         * This application's leaderships: the leadership page shows each role and whether this
         * instance leads it or stands by.
         *
         * @param leaderships read at each page view
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder leaderships(Supplier<? extends Collection<Leadership>> leaderships) {
            if (leaderships == null) {
                throw new IllegalArgumentException("leaderships is null");
            }
            this.leaderships = leaderships;
            return this;
        }

        /**
         * When each job ticks next, for the jobs page's "next tick" column (e.g.
         * {@code LockingScheduler::nextTicks}; the Spring Boot starter reads its {@code @Scheduled}
         * methods'). A job scheduled but not yet run is listed too.
         *
         * @param nextTicks read at each page view: job name to its next tick
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder nextTicks(Supplier<? extends Map<String, Instant>> nextTicks) {
            if (nextTicks == null) {
                throw new IllegalArgumentException("nextTicks is null");
            }
            this.nextTicks = nextTicks;
            return this;
        }

        /**
         * The claimers whose task tables the claim tables page shows, each table once: claimers
         * whose stores describe themselves alike over one table name are one table, judged by the
         * first one's lock timeout. With actions enabled, a stuck task's claim can be released.
         *
         * @param claimers read at each page view
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder claimers(Supplier<? extends Collection<TaskClaimer>> claimers) {
            if (claimers == null) {
                throw new IllegalArgumentException("claimers is null");
            }
            this.claimers = claimers;
            return this;
        }

        /**
         * How long a claimed, backing-off or overdue task must go without progress (an unlock or a
         * {@code moveTo}) to be listed as stuck. Default: ten of its claimer's lock timeouts, at
         * least a minute.
         *
         * @param after at least one second, at most 366 days
         * @return this builder
         * @throws IllegalArgumentException if null or out of range
         */
        public Builder stuckAfter(Duration after) {
            if (after == null || after.compareTo(Duration.ofSeconds(1)) < 0 || after.compareTo(Duration.ofDays(366)) > 0) {
                throw new IllegalArgumentException("stuckAfter is " + after + ": give 1 second to 366 days");
            }
            this.stuckAfter = after;
            return this;
        }

        /**
         * The clock for "time left" and the audit records' times. Default: the system clock.
         *
         * @param clock the clock
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder clock(Clock clock) {
            if (clock == null) {
                throw new IllegalArgumentException("clock is null");
            }
            this.clock = clock;
            return this;
        }

        /**
         * Builds the console.
         *
         * @return the console
         */
        public Console build() {
            return new Console(this);
        }
    }
}
