package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * {@code turnstile console} in a real browser (Debian's headless Chromium, driven by Selenium):
 * the page shows a lock that a real {@code turnstile run} holds on SQLite, PostgreSQL and Redis, its
 * hostile name renders as text, a force-release from the page (sign-in, confirmation) frees the
 * lock and stops the run with exit 70, and actions are refused when disabled or without the token.
 */
class ConsoleBrowserTest {
    /** A name that would run script, break out of an attribute, or hide part of itself if it were not escaped. */
    static final String HOSTILE = "<script>document.title='owned'</script>\"><img src=x onerror=\"document.title='owned'\">'&amp;";
    private static final String TOKEN = "browser-test-token-" + UUID.randomUUID();
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

    @TempDir static Path browserHome;
    @TempDir Path dir;
    private static WebDriver browser;

    @BeforeAll
    static void startBrowser() {
        boolean present = Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER);
        if (!present && "true".equals(System.getenv("CI"))) {
            throw new IllegalStateException("CI needs Debian's chromium and chromium-driver for the console's browser tests: "
                    + "scripts/services.sh installs them");
        }
        Assumptions.assumeTrue(present, "no /usr/bin/chromium and /usr/bin/chromedriver (scripts/services.sh installs them)");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        // a closed network: no background connections, no component updates, no first-run pages
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1280,720", "--user-data-dir=" + browserHome.resolve("profile"));
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort().build();
        browser = new ChromeDriver(service, options);
        browser.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stopBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    @Test
    void sqlite() throws Exception {
        Cli cli = new Cli(dir);
        // a TTL of 3 s renews every second: SQLite tells no one, so the renewal finds the release
        forceReleaseFromThePage(cli, "jdbc:sqlite:" + dir.resolve("console.db") + "?turnstile.createTable=true",
                Duration.ofSeconds(3), Duration.ofSeconds(3));
    }

    @Test
    void postgres() throws Exception {
        forceReleaseFromThePage(new Cli(dir), "jdbc:postgresql://127.0.0.1:5432/test?user=postgres&turnstile.table=console_locks"
                + "&turnstile.createTable=true", Duration.ofSeconds(30), Duration.ofSeconds(3));
    }

    @Test
    void redis() throws Exception {
        forceReleaseFromThePage(new Cli(dir), RedisRunTest.REDIS, Duration.ofSeconds(30), Duration.ofSeconds(3));
    }

    @Test
    void actionsAreRefusedWhenDisabledOrWithoutTheToken() throws Exception {
        Cli cli = new Cli(dir);
        String url = "jdbc:sqlite:" + dir.resolve("refused.db") + "?turnstile.createTable=true";
        String lock = "refused-" + UUID.randomUUID().toString().substring(0, 8);
        Process run = hold(cli, url, lock, Duration.ofSeconds(30));
        Process readOnly = null;
        Process withActions = null;
        try {
            Cli other = new Cli(Files.createDirectories(dir.resolve("read-only")));
            readOnly = other.spawn(Map.of(), "console", "--store", url, "--listen", "127.0.0.1:0");
            String base = servingUrl(other, readOnly);
            browser.get(base);
            waitForRow(lock);
            assertThat(browser.findElements(By.cssSelector("a.release"))).as("no release link when read-only").isEmpty();
            browser.get(base + "release?name=" + lock);
            assertThat(browser.findElement(By.id("message")).getText()).contains("read-only").contains("--allow-release");
            browser.get(base + "login");
            assertThat(browser.findElement(By.id("message")).getText()).contains("read-only");

            Cli third = new Cli(Files.createDirectories(dir.resolve("actions")));
            withActions = third.spawn(Map.of("TURNSTILE_CONSOLE_TOKEN", TOKEN), "console", "--store", url, "--listen",
                    "127.0.0.1:0", "--allow-release");
            String actions = servingUrl(third, withActions);
            browser.manage().deleteAllCookies();
            browser.get(actions + "release?name=" + lock);
            assertThat(browser.getCurrentUrl()).as("not signed in: sent to the sign-in").endsWith("/login");
            browser.findElement(By.id("token")).sendKeys(TOKEN + "-wrong");
            browser.findElement(By.id("sign-in")).click();
            waitForElement("message");
            assertThat(browser.findElement(By.id("message")).getText()).contains("not the console's token");
            assertThat(browser.manage().getCookies()).isEmpty();
            assertThat(run.isAlive()).isTrue();
            Cli.Result locks = cli.run("locks", "--store", url);
            assertThat(locks.out()).contains(lock);
        } finally {
            stop(readOnly);
            stop(withActions);
            run.destroyForcibly();
        }
    }

    /** A claim stuck in a PostgreSQL task table, seen on the Claims page and released from it: its holder is cut. */
    @Test
    void stuckClaimReleasedFromThePage() throws Exception {
        String table = "console_claims_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        String key = "<img src=x onerror=alert(1)> gw-" + UUID.randomUUID().toString().substring(0, 6);
        org.postgresql.ds.PGSimpleDataSource db = new org.postgresql.ds.PGSimpleDataSource();
        db.setUrl("jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
        dev.turnstile.claim.ClaimTable t = dev.turnstile.claim.ClaimTable.builder(table).build();
        Cli consoleCli = new Cli(Files.createDirectories(dir.resolve("claims-console")));
        Process console = null;
        try (dev.turnstile.claim.ClaimStore store = dev.turnstile.jdbc.JdbcClaimStore.builder(db, t).createTableIfMissing(true).build();
                // a long lease: the claim must stay "claimed" while a loaded machine starts the console and the browser
                dev.turnstile.claim.TaskClaimer claimer = dev.turnstile.claim.TaskClaimer.builder(store)
                        .lockTimeout(Duration.ofMinutes(30)).build()) {
            try (java.sql.Connection c = db.getConnection();
                    java.sql.PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " (id, phase, updated_at) VALUES (?, ?, ?)")) {
                ps.setString(1, key);
                ps.setString(2, "Deleting");
                ps.setLong(3, System.currentTimeMillis() - 7_200_000);
                ps.executeUpdate();
                ps.setString(1, "gw-fresh");
                ps.setLong(3, System.currentTimeMillis());
                ps.executeUpdate();
            }
            dev.turnstile.claim.Claim held = claimer.claimNext(dev.turnstile.claim.ClaimFilter.where("phase", "Deleting")).orElseThrow();
            assertThat(held.id()).isEqualTo(key);
            console = consoleCli.spawn(Map.of("TURNSTILE_CONSOLE_TOKEN", TOKEN), "console", "--store",
                    "jdbc:postgresql://127.0.0.1:5432/test?user=postgres&turnstile.table=console_locks&turnstile.createTable=true",
                    "--listen", "127.0.0.1:0", "--allow-release", "--claim-table", table, "--claim-timeout", "30m",
                    "--stuck-after", "1h");
            String base = servingUrl(consoleCli, console);
            browser.manage().deleteAllCookies();
            browser.get(base + "login");
            browser.findElement(By.id("token")).sendKeys(TOKEN);
            browser.findElement(By.id("sign-in")).click();
            waitForUrl(":" + java.net.URI.create(base).getPort() + "/");
            browser.findElement(By.linkText("Claims")).click();
            waitForUrl("/claims");
            WebElement section = browser.findElement(By.cssSelector("section.claim-table"));
            assertThat(section.findElement(By.tagName("h2")).getText()).isEqualTo("Table " + table);
            assertThat(section.findElement(By.cssSelector("table.phases tbody tr")).getText()).startsWith("Deleting 2 1 1 0");
            WebElement stuck = section.findElement(By.cssSelector("table.stuck tbody tr"));
            assertThat(stuck.findElement(By.cssSelector("td.name")).getText()).isEqualTo(key);
            assertThat(browser.findElements(By.cssSelector("main img, main script"))).as("nothing injected").isEmpty();
            assertThat(held.isHeld()).isTrue();
            stuck.findElement(By.cssSelector("a.release-claim")).click();
            waitForElement("confirm");
            assertThat(browser.findElement(By.cssSelector("#confirm dd.name")).getText()).isEqualTo(key);
            assertThat(held.heartbeat()).as("a confirmation page releases nothing").isEqualTo(dev.turnstile.claim.ClaimOutcome.APPLIED);
            browser.findElement(By.id("confirm-release")).click();
            waitForUrl("/history");
            WebElement record = browser.findElement(By.cssSelector("#history tbody tr"));
            assertThat(record.findElement(By.cssSelector("td.name")).getText()).isEqualTo("task " + key + " of table " + table);
            assertThat(record.getText()).contains("freed").contains("token holder");
            assertThat(held.heartbeat()).as("the holder is cut").isEqualTo(dev.turnstile.claim.ClaimOutcome.LOST);
            assertThat(claimer.claimNext(dev.turnstile.claim.ClaimFilter.where("phase", "Deleting")).orElseThrow().id())
                    .as("due at once, before the fresh task").isEqualTo(key);
            assertThat(log(consoleCli)).contains("turnstile: console: claim on task '<img src=x onerror=alert(1)> gw-")
                    .contains("of table '" + table + "' released (claim version 1 cut) by user 'token holder' from 127.0.0.1");
        } finally {
            stop(console);
            try (java.sql.Connection c = db.getConnection(); java.sql.Statement st = c.createStatement()) {
                st.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }

    private void forceReleaseFromThePage(Cli cli, String url, Duration ttl, Duration within) throws Exception {
        String lock = HOSTILE + " " + UUID.randomUUID().toString().substring(0, 8);
        Process run = hold(cli, url, lock, ttl);
        Cli consoleCli = new Cli(Files.createDirectories(dir.resolve("console")));
        Process console = consoleCli.spawn(Map.of("TURNSTILE_CONSOLE_TOKEN", TOKEN), "console", "--store", url,
                "--listen", "127.0.0.1:0", "--allow-release", "--role", lock, "--role", "nobody-leads-this");
        try {
            String base = servingUrl(consoleCli, console);
            browser.manage().deleteAllCookies();
            browser.get(base);
            WebElement row = waitForRow(lock);
            assertThat(row.findElement(By.cssSelector("td.name")).getText()).isEqualTo(lock);
            assertThat(browser.getTitle()).isEqualTo("Locks · Turnstile console");
            assertThat(browser.findElements(By.cssSelector("main img, main script"))).as("nothing injected").isEmpty();
            assertThat(row.getText()).contains("vm:"); // the holder: the run's owner identity (host:pid:...)
            assertThat(browser.findElement(By.id("store-clock")).getText()).as("SQL stores and Redis read their clock").isNotBlank();
            screenshot(url);

            // the same lock as a leadership role: the run is its leader, the term is its fence
            browser.findElement(By.linkText("Leadership")).click();
            waitForUrl("/leaders");
            List<WebElement> roles = browser.findElements(By.cssSelector("#leaders tbody tr"));
            assertThat(roles).extracting(tr -> tr.findElement(By.cssSelector("td.name")).getText())
                    .containsExactlyInAnyOrder(lock, "nobody-leads-this");
            WebElement led = roles.stream().filter(tr -> tr.getText().contains("vm:")).findFirst().orElseThrow();
            assertThat(led.findElement(By.cssSelector("td.name")).getText()).isEqualTo(lock);
            assertThat(browser.findElements(By.cssSelector("main img, main script"))).isEmpty();
            browser.findElement(By.linkText("Jobs")).click();
            waitForUrl("/jobs");
            assertThat(browser.findElement(By.id("jobs-none")).getText()).contains("runs no jobs");
            browser.findElement(By.linkText("Locks")).click();
            waitForUrl(":" + java.net.URI.create(base).getPort() + "/");
            row = waitForRow(lock);

            row.findElement(By.cssSelector("a.release")).click();
            waitForUrl("/login");
            browser.findElement(By.id("token")).sendKeys(TOKEN);
            browser.findElement(By.id("sign-in")).click();
            row = waitForRow(lock);
            row.findElement(By.cssSelector("a.release")).click();
            waitForUrl("/release?name=" + java.net.URLEncoder.encode(lock, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20"));
            WebElement confirm = browser.findElement(By.id("confirm"));
            assertThat(confirm.findElement(By.cssSelector("dd.name")).getText()).isEqualTo(lock);
            String fence = confirm.findElements(By.tagName("dd")).get(2).getText();
            assertThat(run.isAlive()).as("a confirmation page releases nothing").isTrue();
            long clicked = System.nanoTime();
            browser.findElement(By.id("confirm-release")).click();

            waitForUrl("/history"); // a click starts the navigation; it may not have ended yet
            WebElement record = browser.findElement(By.cssSelector("#history tbody tr"));
            assertThat(record.findElement(By.cssSelector("td.name")).getText()).isEqualTo(lock);
            assertThat(record.getText()).contains("freed").contains(fence).contains("token holder").contains("127.0.0.1");
            assertThat(browser.getTitle()).isEqualTo("History · Turnstile console");

            assertThat(run.waitFor(within.toMillis() + 10_000, TimeUnit.MILLISECONDS)).as("the run stopped (log: %s)", log(cli)).isTrue();
            Duration took = Duration.ofNanos(System.nanoTime() - clicked);
            assertThat(run.exitValue()).as("lease lost: exit 70 (log: %s)", log(cli)).isEqualTo(70);
            assertThat(took).as("stopped soon after the release").isLessThan(within);
            assertThat(log(consoleCli)).contains("turnstile: console: lock '").contains("freed (held by 'vm:")
                    .contains("fence " + fence + ") by user 'token holder' from 127.0.0.1");
            browser.get(base);
            assertThat(browser.findElements(By.cssSelector("#locks td.name"))).extracting(WebElement::getText).doesNotContain(lock);
        } finally {
            stop(console);
            run.destroyForcibly();
        }
    }

    private Process hold(Cli cli, String url, String lock, Duration ttl) throws Exception {
        Path started = dir.resolve("started-" + UUID.randomUUID());
        Process run = cli.spawn(Map.of(), "run", "--store", url, "--lock", lock, "--ttl", ttl.toMillis() + "ms",
                "--grace", "200ms", "--", "sh", "-c", "touch '" + started + "'; exec sleep 120");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.exists(started)) {
            assertThat(run.isAlive()).as("the run is going (log: %s)", log(cli)).isTrue();
            assertThat(System.nanoTime() - deadline).as("the command started").isNegative();
            Thread.sleep(20);
        }
        Thread.sleep(500); // the holder's release watch is set off the acquire's path
        return run;
    }

    /** Waits until the browser is at a URL ending so (a click starts a navigation; it may not have ended). */
    private static void waitForUrl(String suffix) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!browser.getCurrentUrl().endsWith(suffix) || !"complete".equals(
                ((org.openqa.selenium.JavascriptExecutor) browser).executeScript("return document.readyState"))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the browser is at " + browser.getCurrentUrl() + ", not at …" + suffix + ": "
                        + browser.findElement(By.tagName("body")).getText());
            }
            Thread.sleep(50);
        }
    }

    /** Waits until the page has an element with this id. */
    private static void waitForElement(String id) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (browser.findElements(By.id(id)).isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no element '" + id + "' on " + browser.getCurrentUrl());
            }
            Thread.sleep(50);
        }
    }

    /** The row of a lock, once the page shows it (the page refreshes itself every 5 s). */
    private static WebElement waitForRow(String lock) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (true) {
            try {
                for (WebElement tr : browser.findElements(By.cssSelector("#locks tbody tr"))) {
                    if (tr.findElement(By.cssSelector("td.name")).getText().equals(lock)) {
                        return tr;
                    }
                }
            } catch (org.openqa.selenium.StaleElementReferenceException e) {
                // the page replaced its rows while we read them: look again
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no row for lock '" + lock + "' on " + browser.getCurrentUrl() + ": "
                        + browser.findElement(By.tagName("main")).getText());
            }
            Thread.sleep(100);
        }
    }

    private static final Pattern SERVING = Pattern.compile("serving (http://127\\.0\\.0\\.1:\\d+/)");

    /** The console's URL, from the line it prints once it listens. */
    private static String servingUrl(Cli cli, Process console) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            Matcher m = SERVING.matcher(log(cli));
            if (m.find()) {
                return m.group(1);
            }
            assertThat(console.isAlive()).as("the console is running (log: %s)", log(cli)).isTrue();
            Thread.sleep(50);
        }
        throw new AssertionError("the console did not say where it serves: " + log(cli));
    }

    private static void screenshot(String url) throws Exception {
        File shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
        String store = url.substring(0, url.indexOf(':', 5)).replace("jdbc:", "");
        Path target = Path.of("target", "console-" + store + ".png");
        Files.createDirectories(target.getParent());
        Files.copy(shot.toPath(), target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    private static void stop(Process p) throws InterruptedException {
        if (p != null) {
            p.destroy();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }

    private static String log(Cli cli) throws Exception {
        Path log = cli.stateHome.resolve("spawned.log");
        return Files.exists(log) ? Files.readString(log) : "(none)";
    }

}
