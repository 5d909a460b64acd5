package dev.turnstile.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.DeferredImportSelector;
import org.springframework.context.annotation.Import;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * The console inside a Spring Boot application on a real Tomcat, behind the application's own
 * Spring Security (HTTP basic here): pages need the application's login, the release form carries
 * Spring Security's CSRF token and is refused without it, and the record names the signed-in user.
 */
@Timeout(120)
class ConsoleServletTest {
    private static final String PG = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres&turnstile.table=console_servlet_locks"
            + "&turnstile.createTable=true";
    private static final String HOSTILE = "<script>alert(1)</script>\"'&";
    private static final String OPS = "Basic " + Base64.getEncoder().encodeToString("ops:pw".getBytes(StandardCharsets.UTF_8));

    private final HttpClient http = HttpClient.newHttpClient();
    private ConfigurableApplicationContext app;

    /** The web stack of whichever Spring Boot line runs the test, in auto-configuration order. */
    static class WebStack implements DeferredImportSelector {
        @Override
        public String[] selectImports(AnnotationMetadata metadata) {
            return new String[] {
                Boot.firstPresent("org.springframework.boot.tomcat.autoconfigure.servlet.TomcatServletWebServerAutoConfiguration",
                        "org.springframework.boot.autoconfigure.web.servlet.ServletWebServerFactoryAutoConfiguration").getName(),
                Boot.firstPresent("org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration",
                        "org.springframework.boot.autoconfigure.web.servlet.DispatcherServletAutoConfiguration").getName(),
                TurnstileAutoConfiguration.class.getName(),
                TurnstileConsoleAutoConfiguration.class.getName(),
            };
        }
    }

    /** The application's security: every request authenticated (HTTP basic), CSRF on (Spring Security's default). */
    @Configuration(proxyBeanMethods = false)
    @EnableWebSecurity
    @Import(WebStack.class)
    static class SecuredApp {
        @Bean
        SecurityFilterChain security(HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(a -> a.anyRequest().authenticated()).httpBasic(Customizer.withDefaults()).build();
        }

        @Bean
        UserDetailsService users() {
            return new InMemoryUserDetailsManager(User.withUsername("ops").password("{noop}pw").roles("OPS").build());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import(WebStack.class)
    static class OpenApp {}

    @AfterEach
    void stop() {
        if (app != null) {
            app.close();
        }
    }

    private String start(Class<?> config, String... properties) {
        app = new SpringApplicationBuilder(config).web(WebApplicationType.SERVLET)
                .properties("server.port=0", "server.address=127.0.0.1", "turnstile.store.url=" + PG)
                .properties(properties).run();
        return "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
    }

    private HttpResponse<String> get(String url, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).GET();
        if (headers.length > 0) {
            b.headers(headers);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private HttpResponse<String> post(String url, String form, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).POST(HttpRequest.BodyPublishers.ofString(form))
                .header("Content-Type", "application/x-www-form-urlencoded");
        if (headers.length > 0) {
            b.headers(headers);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Test
    void releaseBehindTheApplicationsLoginAndCsrfProtection() throws Exception {
        String base = start(SecuredApp.class, "turnstile.console.enabled=true", "turnstile.console.actions-enabled=true");
        try (LockStore store = LockStores.open(PG); Turnstile holder = Turnstile.builder(store).owner("worker-7").build()) {
            Lease lease = holder.tryAcquire(HOSTILE, LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow();
            assertThat(get(base + "/turnstile-console/").statusCode()).as("the application's login applies").isEqualTo(401);

            HttpResponse<String> page = get(base + "/turnstile-console/", "Authorization", OPS);
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;").contains("worker-7")
                    .contains("signed in as <b id=\"user\">ops</b>").doesNotContain("<script>alert").doesNotContain("5432")
                    .contains("href=\"/turnstile-console/release?name=");
            assertThat(page.headers().firstValue("Content-Security-Policy")).get().asString().contains("script-src 'self'");
            assertThat(get(base + "/turnstile-console/static/console.js", "Authorization", OPS).statusCode()).isEqualTo(200);

            HttpResponse<String> confirm = get(base + "/turnstile-console/release?name=" + enc(HOSTILE), "Authorization", OPS);
            assertThat(confirm.statusCode()).isEqualTo(200);
            Matcher csrf = Pattern.compile("name=\"_csrf\" value=\"([^\"]+)\"").matcher(confirm.body());
            assertThat(csrf.find()).as(confirm.body()).isTrue();
            Matcher own = Pattern.compile("name=\"turnstile_csrf\" value=\"([^\"]+)\"").matcher(confirm.body());
            assertThat(own.find()).as(confirm.body()).isTrue();
            String session = confirm.headers().firstValue("Set-Cookie").map(c -> c.substring(0, c.indexOf(';'))).orElse("");
            String form = "name=" + enc(HOSTILE) + "&fence=" + lease.fence();

            HttpResponse<String> noCsrf = post(base + "/turnstile-console/release", form, "Authorization", OPS, "Cookie", session);
            assertThat(noCsrf.statusCode()).as("Spring Security's CSRF filter").isEqualTo(403);
            assertThat(lease.isHeld()).isTrue();

            HttpResponse<String> springOnly = post(base + "/turnstile-console/release", form + "&_csrf=" + enc(csrf.group(1)),
                    "Authorization", OPS, "Cookie", session);
            assertThat(springOnly.statusCode()).as("the console's own token is checked too").isEqualTo(403);
            assertThat(lease.isHeld()).isTrue();

            HttpResponse<String> done = post(base + "/turnstile-console/release", form + "&_csrf=" + enc(csrf.group(1))
                    + "&turnstile_csrf=" + enc(own.group(1)), "Authorization", OPS, "Cookie", session);
            assertThat(done.statusCode()).as(done.body()).isEqualTo(303);
            assertThat(done.headers().firstValue("Location")).get().asString().endsWith("/turnstile-console/history");
            assertThat(holder.heldLocks()).extracting(l -> l.name()).doesNotContain(HOSTILE);
            HttpResponse<String> history = get(base + "/turnstile-console/history", "Authorization", OPS);
            assertThat(history.body()).contains("freed").contains(">ops<").contains("worker-7").contains(">" + lease.fence() + "<");
        }
    }

    @Test
    void readOnlyUnlessActionsAreEnabled() throws Exception {
        String base = start(SecuredApp.class, "turnstile.console.enabled=true");
        try (LockStore store = LockStores.open(PG); Turnstile holder = Turnstile.builder(store).build()) {
            Lease lease = holder.tryAcquire("read-only-" + System.nanoTime(), LockOptions.lockAtMostFor(Duration.ofMinutes(1)))
                    .orElseThrow();
            HttpResponse<String> page = get(base + "/turnstile-console/", "Authorization", OPS);
            assertThat(page.body()).contains(lease.name()).doesNotContain("Release…");
            HttpResponse<String> confirm = get(base + "/turnstile-console/release?name=" + enc(lease.name()), "Authorization", OPS);
            assertThat(confirm.statusCode()).isEqualTo(403);
            assertThat(confirm.body()).contains("turnstile.console.actions-enabled=true");
            assertThat(lease.isHeld()).isTrue();
        }
    }

    @Test
    void jobsAndLeadershipPagesShowWhatThisApplicationRanAndLeads() throws Exception {
        String base = start(SecuredApp.class, "turnstile.console.enabled=true");
        String job = "console-job-" + System.nanoTime();
        dev.turnstile.job.JobRunner runner = app.getBean(dev.turnstile.job.JobRunner.class);
        runner.run(job, () -> { });
        runner.run(job, () -> { });
        String role = "console-role-" + System.nanoTime();
        try (dev.turnstile.leader.Leadership leadership = dev.turnstile.leader.Leadership.builder(app.getBean(Turnstile.class), role)
                .lockAtMostFor(Duration.ofSeconds(30)).build()) {
            app.getBeanFactory().registerSingleton("consoleTestLeadership", leadership);
            leadership.start();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!leadership.isLeader() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            HttpResponse<String> jobs = get(base + "/turnstile-console/jobs", "Authorization", OPS);
            assertThat(jobs.statusCode()).isEqualTo(200);
            assertThat(jobs.body()).contains(job).contains(">2<").contains("ran");
            HttpResponse<String> leaders = get(base + "/turnstile-console/leaders", "Authorization", OPS);
            assertThat(leaders.body()).contains(role).contains("leads (term ");
        }
    }

    /** A claimer over a PostgreSQL task table with one stuck claim: the application's TaskClaimer beans reach the claims page. */
    @Configuration(proxyBeanMethods = false)
    @Import(SecuredApp.class)
    static class ClaimingApp {
        static final String TABLE = "console_servlet_claims";

        @Bean(destroyMethod = "close")
        dev.turnstile.claim.TaskClaimer claimer() throws Exception {
            org.postgresql.ds.PGSimpleDataSource db = new org.postgresql.ds.PGSimpleDataSource();
            db.setUrl("jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
            try (java.sql.Connection c = db.getConnection(); java.sql.Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + TABLE);
            }
            dev.turnstile.claim.ClaimStore store = dev.turnstile.jdbc.JdbcClaimStore.builder(db,
                    dev.turnstile.claim.ClaimTable.builder(TABLE).build()).createTableIfMissing(true).build();
            try (java.sql.Connection c = db.getConnection(); java.sql.Statement s = c.createStatement()) {
                s.execute("INSERT INTO " + TABLE + " (id, phase, updated_at) VALUES ('gw-stuck', 'Deleting', "
                        + (System.currentTimeMillis() - 7_200_000) + ")");
            }
            dev.turnstile.claim.TaskClaimer claimer = dev.turnstile.claim.TaskClaimer.builder(store).build();
            claimer.claimNext(dev.turnstile.claim.ClaimFilter.where("phase", "Deleting")).orElseThrow();
            return claimer;
        }
    }

    @Test
    void claimTablesPageShowsTheApplicationsClaimers() throws Exception {
        String base = start(ClaimingApp.class, "turnstile.console.enabled=true", "turnstile.console.stuck-after=90m");
        HttpResponse<String> claims = get(base + "/turnstile-console/claims", "Authorization", OPS);
        assertThat(claims.statusCode()).isEqualTo(200);
        assertThat(claims.body()).contains("Table " + ClaimingApp.TABLE).contains("stuck after 1 h 30 min").contains(">gw-stuck<")
                .doesNotContain("Release…");
        assertThat(get(base + "/turnstile-console/claims").statusCode()).as("behind the application's login").isEqualTo(401);
        app.close();
        app = null;
        assertThatThrownBy(() -> start(ClaimingApp.class, "turnstile.console.enabled=true", "turnstile.console.stuck-after=10ms"))
                .hasStackTraceContaining("turnstile.console: stuckAfter is PT0.01S: give 1 second to 366 days");
    }

    /** A {@code @Scheduled} job under a {@code @TurnstileLock}, first due in an hour. */
    @Configuration(proxyBeanMethods = false)
    @Import(SecuredApp.class)
    @org.springframework.scheduling.annotation.EnableScheduling
    static class SchedulingApp {
        @Bean
        HourlyJob hourlyJob() {
            return new HourlyJob();
        }
    }

    static class HourlyJob {
        @org.springframework.scheduling.annotation.Scheduled(fixedRate = 3_600_000, initialDelay = 3_600_000)
        @TurnstileLock(name = "console-ticking-job")
        public void tick() {
            // never runs within the test
        }
    }

    @Test
    void jobsPageShowsTheNextTickOfScheduledJobs() throws Exception {
        String base = start(SchedulingApp.class, "turnstile.console.enabled=true");
        HttpResponse<String> jobs = get(base + "/turnstile-console/jobs", "Authorization", OPS);
        assertThat(jobs.statusCode()).isEqualTo(200);
        assertThat(jobs.body()).contains(">console-ticking-job<").contains("(in 59 min").contains("not run yet");
    }

    @Test
    void offUnlessEnabled() throws Exception {
        String base = start(OpenApp.class);
        assertThat(get(base + "/turnstile-console/").statusCode()).isEqualTo(404);
    }

    @Test
    void withoutSpringSecurityTheConsoleRefusesActionsAndItsSettingFailsTheStart() throws Exception {
        // Spring Security is on this test's class path, but not in this application: no CSRF token reaches the console
        String base = start(OpenApp.class, "turnstile.console.enabled=true", "turnstile.console.path=/ops/locks");
        assertThat(get(base + "/ops/locks/").body()).contains("Held locks");
        assertThat(post(base + "/ops/locks/release", "name=x&fence=1&csrf=x").statusCode()).isEqualTo(403);
    }

    @Test
    void badPathsFailTheStartWithWhatToGive() {
        for (String path : new String[] {"turnstile", "/a/", "/a/../b", "/a b", "/*", "/a;b", "/"}) {
            assertThatThrownBy(() -> start(OpenApp.class, "turnstile.console.enabled=true", "turnstile.console.path=" + path))
                    .as(path).rootCause().hasMessageContaining("turnstile.console.path");
        }
        assertThatThrownBy(() -> start(OpenApp.class, "turnstile.console.enabled=true", "turnstile.console.max-rows=0"))
                .rootCause().hasMessageContaining("maxRows is 0");
    }

    @Test
    void actionsWithoutSpringSecurityOnTheClassPathFailTheStart() {
        ClassLoader noSecurity = new org.springframework.boot.test.context.FilteredClassLoader("org.springframework.security");
        assertThatThrownBy(() -> TurnstileConsoleAutoConfiguration.checkActionsPossible(true, "/turnstile-console", noSecurity))
                .hasMessageContaining("needs Spring Security");
        TurnstileConsoleAutoConfiguration.checkActionsPossible(false, "/turnstile-console", noSecurity);
        TurnstileConsoleAutoConfiguration.checkActionsPossible(true, "/turnstile-console", getClass().getClassLoader());
    }

    @Test
    void theRuleForPathsAcceptsWhatTheDocsShow() {
        assertThat(TurnstileConsoleAutoConfiguration.checkPath("/turnstile-console")).isEqualTo("/turnstile-console");
        assertThat(TurnstileConsoleAutoConfiguration.checkPath("/actuator/turnstile-console")).isEqualTo("/actuator/turnstile-console");
    }
}
