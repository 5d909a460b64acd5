package dev.turnstile.bench;

import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.console.Console;
import dev.turnstile.console.ConsoleServer;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Whether the console stays responsive with 10,000 held locks (issue 27): each store is filled with
 * {@code -Dbench.consoleLocks} held locks (default 10,000) by one client, then the console's pages
 * are timed over HTTP from this JVM (the locks page, a filtered page, a release confirmation, the
 * bytes of each), and in Debian's headless chromium (navigation to a loaded page, and one
 * self-refresh of the table as the page's script does it every 5 s).
 *
 * <p>Settings: {@code -Dbench.consoleStores=postgresql,redis,sqlite}, {@code -Dbench.consoleLocks=10000},
 * {@code -Dbench.consoleRounds=30}.
 */
public final class ConsoleBench {
    private ConsoleBench() {}

    /**
     * Runs the benchmark and prints a Markdown table.
     *
     * @param args unused
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        int locks = Integer.getInteger("bench.consoleLocks", 10_000);
        int rounds = Integer.getInteger("bench.consoleRounds", 30);
        List<String> stores = List.of(System.getProperty("bench.consoleStores", "postgresql,redis,sqlite").split(",", -1));
        Path tmp = Files.createTempDirectory("console-bench");
        List<String> rows = new ArrayList<>();
        ChromeDriver browser = browser(tmp);
        try {
            for (String kind : stores) {
                String url = switch (kind) {
                    case "postgresql" -> BenchConfig.postgresUrl() + (BenchConfig.postgresUrl().contains("?") ? "&" : "?")
                            + "turnstile.table=bench_console&turnstile.createTable=true";
                    case "redis" -> BenchRedis.url() + "?turnstile.prefix=bench-console:";
                    case "sqlite" -> "jdbc:sqlite:" + tmp.resolve("console.db") + "?turnstile.createTable=true";
                    default -> throw new IllegalArgumentException("bench.consoleStores: unknown store " + kind);
                };
                rows.addAll(measure(kind, url, locks, rounds, browser));
            }
        } finally {
            browser.quit();
        }
        String table = "| store | held locks | page | median ms | p90 ms | max ms | bytes |\n| --- | ---: | --- | ---: | ---: | ---: | ---: |\n"
                + String.join("\n", rows) + "\n";
        System.out.println(table);
        String report = System.getProperty("bench.report");
        if (report != null) {
            Files.writeString(Path.of(report), "\n## Console with " + locks + " held locks\n\n" + table,
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        }
    }

    private static List<String> measure(String kind, String url, int locks, int rounds, ChromeDriver browser) throws Exception {
        List<String> rows = new ArrayList<>();
        try (LockStore store = LockStores.open(url); Turnstile turnstile = Turnstile.builder(store).owner("bench-holder").build()) {
            long fillStart = System.nanoTime();
            String prefix = "console-bench/" + Long.toString(System.nanoTime(), 36) + "/";
            LockOptions ttl = LockOptions.lockAtMostFor(Duration.ofMinutes(30));
            for (int i = 0; i < locks; i++) {
                turnstile.tryAcquire(prefix + "job-" + i, ttl).orElseThrow();
            }
            System.err.printf(Locale.ROOT, "%s: %d locks held in %.1f s%n", kind, locks, (System.nanoTime() - fillStart) / 1e9);
            Console console = Console.builder(turnstile).actionsEnabled(true, "bench").build();
            try (ConsoleServer server = ConsoleServer.builder(console)
                    .listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).token(ConsoleServer.newToken()).start()) {
                String base = server.url();
                HttpClient http = HttpClient.newHttpClient();
                String one = prefix + "job-" + (locks / 2);
                Map<String, String> pages = new java.util.LinkedHashMap<>();
                pages.put("locks page (all)", base);
                pages.put("filtered to one lock", base + "?q=" + URLEncoder.encode(one, StandardCharsets.UTF_8));
                for (Map.Entry<String, String> page : pages.entrySet()) {
                    long[] ms = new long[rounds];
                    int bytes = 0;
                    for (int r = -5; r < rounds; r++) {
                        long t = System.nanoTime();
                        HttpResponse<byte[]> resp = http.send(HttpRequest.newBuilder(URI.create(page.getValue())).build(),
                                HttpResponse.BodyHandlers.ofByteArray());
                        if (resp.statusCode() != 200) {
                            throw new IllegalStateException(page.getKey() + ": HTTP " + resp.statusCode());
                        }
                        if (r >= 0) {
                            ms[r] = (System.nanoTime() - t) / 1_000;
                            bytes = resp.body().length;
                        }
                    }
                    rows.add(row(kind, locks, page.getKey() + " (HTTP)", ms, bytes));
                }
                // the browser: a full navigation (HTML, script, style sheet, layout), then the script's refresh
                long[] nav = new long[Math.min(rounds, 15)];
                long[] refresh = new long[nav.length];
                for (int r = -2; r < nav.length; r++) {
                    browser.get(base);
                    Object navMs = ((JavascriptExecutor) browser).executeScript(
                            "const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime;");
                    Object refreshMs = ((JavascriptExecutor) browser).executeAsyncScript(
                            "const done = arguments[arguments.length - 1]; const t = performance.now();"
                                    + "fetch(location.href, {cache: 'no-store'}).then(r => r.text()).then(h => {"
                                    + " const d = new DOMParser().parseFromString(h, 'text/html');"
                                    + " document.getElementById('live').replaceWith(document.importNode(d.getElementById('live'), true));"
                                    + " requestAnimationFrame(() => done(performance.now() - t)); });");
                    if (r >= 0) {
                        nav[r] = (long) (((Number) navMs).doubleValue() * 1000);
                        refresh[r] = (long) (((Number) refreshMs).doubleValue() * 1000);
                    }
                }
                rows.add(row(kind, locks, "browser: open the locks page", nav, 0));
                rows.add(row(kind, locks, "browser: one self-refresh", refresh, 0));
            }
            long clean = System.nanoTime();
            turnstile.heldLeases().forEach(l -> l.release());
            System.err.printf(Locale.ROOT, "%s: released in %.1f s%n", kind, (System.nanoTime() - clean) / 1e9);
        }
        return rows;
    }

    private static String row(String kind, int locks, String page, long[] micros, int bytes) {
        long[] s = micros.clone();
        java.util.Arrays.sort(s);
        return String.format(Locale.ROOT, "| %s | %,d | %s | %.1f | %.1f | %.1f | %s |", kind, locks, page,
                s[s.length / 2] / 1000.0, s[(int) Math.floor(s.length * 0.9)] / 1000.0, s[s.length - 1] / 1000.0,
                bytes > 0 ? String.format(Locale.ROOT, "%,d", bytes) : "");
    }

    private static ChromeDriver browser(Path tmp) {
        ChromeOptions options = new ChromeOptions();
        options.setBinary("/usr/bin/chromium");
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                "--window-size=1280,900", "--user-data-dir=" + tmp.resolve("chromium"));
        return new ChromeDriver(new ChromeDriverService.Builder().usingDriverExecutable(new java.io.File("/usr/bin/chromedriver"))
                .usingAnyFreePort().build(), options);
    }
}
