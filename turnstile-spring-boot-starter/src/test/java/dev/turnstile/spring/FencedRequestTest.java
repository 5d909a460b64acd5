package dev.turnstile.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.jdbc.JdbcLockStore;
import dev.turnstile.spring.fence.FencedRequestFilter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.DeferredImportSelector;
import org.springframework.context.annotation.Import;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RestController;

/**
 * A real Tomcat receives writes fenced by the senders' leases on PostgreSQL (issue 26): a stale
 * holder's request is refused with 409 and never reaches the handler.
 */
@Timeout(120)
class FencedRequestTest {
    private static final String PG = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
    private static final String TABLE = "turnstile_fences_http";
    private static final List<Long> HANDLED = new CopyOnWriteArrayList<>();
    private static ConfigurableApplicationContext app;
    private static String base;
    private final HttpClient http = HttpClient.newHttpClient();

    /** The report service: it appends the fence of every write it handles. */
    @RestController
    static class ReportController {
        @PostMapping("/api/report")
        String write(@RequestAttribute(FencedRequestFilter.FENCE_ATTRIBUTE) Long fence) {
            HANDLED.add(fence);
            return "written with fence " + fence;
        }

        @GetMapping("/api/report")
        String read() {
            return "read";
        }

        @PostMapping("/open/ping")
        String ping() {
            return "pong";
        }

        /** An asynchronous handler: its write happens after the filter's chain has returned. */
        @PostMapping("/api/slow")
        java.util.concurrent.Callable<String> slow(@RequestAttribute(FencedRequestFilter.FENCE_ATTRIBUTE) Long fence) {
            return () -> {
                Thread.sleep(1_000);
                HANDLED.add(fence);
                return "slow write with fence " + fence;
            };
        }

        /** Any path under /api, without the fence attribute required: a bypass would show as 200. */
        @PostMapping("/api/open-door")
        String door() {
            return "through";
        }
    }

    /** The web stack of whichever Spring Boot line runs the test, in auto-configuration order. */
    static class WebStack implements DeferredImportSelector {
        @Override
        public String[] selectImports(AnnotationMetadata metadata) {
            return new String[] {
                Boot.firstPresent("org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
                        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration").getName(),
                Boot.firstPresent("org.springframework.boot.tomcat.autoconfigure.servlet.TomcatServletWebServerAutoConfiguration",
                        "org.springframework.boot.autoconfigure.web.servlet.ServletWebServerFactoryAutoConfiguration").getName(),
                Boot.firstPresent("org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration",
                        "org.springframework.boot.autoconfigure.web.servlet.DispatcherServletAutoConfiguration").getName(),
                Boot.firstPresent("org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration",
                        "org.springframework.boot.autoconfigure.web.servlet.WebMvcAutoConfiguration").getName(),
                TurnstileFencingAutoConfiguration.class.getName(),
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import({ReportController.class, WebStack.class})
    static class ReportService {}

    @BeforeAll
    static void start() throws Exception {
        try (Connection c = DriverManager.getConnection(PG); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + TABLE);
        }
        app = new SpringApplicationBuilder(ReportService.class).web(WebApplicationType.SERVLET)
                .properties("server.port=0", "server.address=127.0.0.1", "spring.datasource.url=" + PG,
                        "turnstile.fencing.http.enabled=true", "turnstile.fencing.http.paths=/api/**",
                        "turnstile.fencing.http.table=" + TABLE)
                .run();
        base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
    }

    @AfterAll
    static void stop() {
        if (app != null) {
            app.close();
        }
    }

    private HttpResponse<String> post(String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).POST(HttpRequest.BodyPublishers.noBody());
        if (headers.length > 0) {
            b.headers(headers);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private HttpResponse<String> fenced(String lock, String fence) throws Exception {
        return post("/api/report", FencedRequestFilter.LOCK_HEADER, lock, FencedRequestFilter.FENCE_HEADER, fence);
    }

    @Test
    void aStaleHoldersRequestIsRefusedAndNeverReachesTheHandler() throws Exception {
        Turnstile turnstile = Turnstile.builder(JdbcLockStore.builder(new org.postgresql.ds.PGSimpleDataSource() {
            {
                setUrl(PG);
            }
        }).createTableIfMissing(true).build()).build();
        String lock = Boot.unique("report");
        LockOptions shortLease = LockOptions.builder().lockAtMostFor(Duration.ofMillis(400)).keepAlive(false).build();
        try (turnstile) {
            Lease first = turnstile.tryAcquire(lock, shortLease).orElseThrow();
            assertThat(fenced(lock, Long.toString(first.fence())).statusCode()).isEqualTo(200);
            // the first holder pauses past its lease; the next one takes the lock and writes
            Thread.sleep(600);
            Lease second = turnstile.tryAcquire(lock, shortLease).orElseThrow();
            assertThat(second.fence()).isGreaterThan(first.fence());
            HttpResponse<String> newer = fenced(lock, Long.toString(second.fence()));
            assertThat(newer.statusCode()).isEqualTo(200);
            assertThat(newer.body()).isEqualTo("written with fence " + second.fence());
            // the first wakes up and writes
            HttpResponse<String> stale = fenced(lock, Long.toString(first.fence()));
            assertThat(stale.statusCode()).isEqualTo(409);
            assertThat(stale.headers().firstValue(FencedRequestFilter.SEEN_HEADER)).hasValue(Long.toString(second.fence()));
            assertThat(stale.body()).contains("stale fence");
            assertThat(HANDLED).contains(first.fence(), second.fence()).doesNotHaveDuplicates();
            assertThat(HANDLED.indexOf(first.fence())).isLessThan(HANDLED.indexOf(second.fence()));
            second.close();
        }
    }

    @Test
    void missingOrBadFencesAreRefusedWithWhatToSend() throws Exception {
        HttpResponse<String> none = post("/api/report");
        assertThat(none.statusCode()).isEqualTo(428);
        assertThat(none.body()).contains("Turnstile-Lock").contains("Turnstile-Fence");
        for (String bad : List.of("abc", "-1", "0", "1.5", "99999999999999999999", "9223372036854775808", " ")) {
            HttpResponse<String> r = fenced("report", bad);
            assertThat(r.statusCode()).as(bad).isEqualTo(400);
        }
        assertThat(fenced("report%C2%A0", "1").statusCode()).as("a name that is not a lock name").isEqualTo(400);
        assertThat(fenced("report%4", "1").statusCode()).as("a broken escape").isEqualTo(400);
        assertThat(fenced("report%C3%28", "1").statusCode()).as("not UTF-8").isEqualTo(400);
        String accented = Boot.unique("rapport-é 100%");
        assertThat(FencedRequestFilter.lockHeaderValue(accented)).doesNotContain("é").contains("%25");
        assertThat(fenced(FencedRequestFilter.lockHeaderValue(accented), "3").statusCode()).isEqualTo(200);
        assertThat(fenced(FencedRequestFilter.lockHeaderValue(accented), "2").statusCode()).isEqualTo(409);
        // a hostile name is a name like any other, and comes back as plain text only
        String hostile = "<script>alert(1)</script>" + Boot.unique("");
        assertThat(fenced(hostile, "5").statusCode()).isEqualTo(200);
        HttpResponse<String> html = fenced(hostile, "1");
        assertThat(html.statusCode()).isEqualTo(409);
        assertThat(html.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
        assertThat(html.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
        assertThat(HANDLED).doesNotContain(0L, -1L);
    }

    /** Attack finding: the filter matched the raw path; Spring routes the decoded one without ;parameters. */
    @Test
    void encodedAndParameterisedPathsAreGuardedAsTheApplicationRoutesThem() throws Exception {
        for (String path : List.of("/api/open-door", "/%61pi/open-door", "/ap%69/open-door", "/api;x=1/open-door",
                "/api/open-door;jsessionid=1", "/api//open-door")) {
            HttpResponse<String> r = post(path);
            assertThat(r.statusCode()).as(path + ": " + r.body()).isIn(428, 400, 404);
            assertThat(r.body()).as(path).doesNotContain("through");
        }
    }

    /** Attack finding: an asynchronous handler's write landed after a newer fence's, the gate already let go. */
    @Test
    void anAsynchronousHandlerIsRefusedRatherThanWritingAfterTheGateLetGo() throws Exception {
        String lock = Boot.unique("slow");
        HttpResponse<String> slow = post("/api/slow", FencedRequestFilter.LOCK_HEADER, lock, FencedRequestFilter.FENCE_HEADER, "5");
        assertThat(slow.statusCode()).isEqualTo(500);
        Thread.sleep(1_500);
        assertThat(HANDLED).doesNotContain(5L);
        assertThat(fenced(lock, "6").statusCode()).as("the resource is free").isEqualTo(200);
    }

    @Test
    void readsAndUnguardedPathsPassUnchecked() throws Exception {
        HttpResponse<String> read = http.send(HttpRequest.newBuilder(URI.create(base + "/api/report")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(read.statusCode()).isEqualTo(200);
        assertThat(post("/open/ping").body()).isEqualTo("pong");
    }

    @Test
    void enabledWithNowhereToRecordFencesFailsTheStartWithWhatToDo() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(WebOnly.class).web(WebApplicationType.SERVLET)
                .properties("server.port=0", "turnstile.fencing.http.enabled=true").run().close())
                .hasStackTraceContaining("nowhere to record fences");
        assertThatThrownBy(() -> new SpringApplicationBuilder(ReportService.class).web(WebApplicationType.SERVLET)
                .properties("server.port=0", "spring.datasource.url=" + PG, "turnstile.fencing.http.enabled=true",
                        "turnstile.fencing.http.paths=api/**").run().close())
                .hasStackTraceContaining("'api/**' does not start with '/'");
        assertThatThrownBy(() -> new SpringApplicationBuilder(ReportService.class).web(WebApplicationType.SERVLET)
                .properties("server.port=0", "spring.datasource.url=" + PG, "turnstile.fencing.http.enabled=true",
                        "turnstile.fencing.http.table=x;drop table y").run().close())
                .hasStackTraceContaining("turnstile.fencing.http.table");
        assertThatThrownBy(() -> new SpringApplicationBuilder(ReportService.class).web(WebApplicationType.SERVLET)
                .properties("server.port=0", "spring.datasource.url=" + PG, "turnstile.fencing.http.enabled=true",
                        "turnstile.fencing.http.methods=POST,PSOT").run().close())
                .hasStackTraceContaining("'PSOT' is not an HTTP method");
    }

    /** A web application without a DataSource. */
    @Configuration(proxyBeanMethods = false)
    @Import(WebOnlyStack.class)
    static class WebOnly {}

    static class WebOnlyStack implements DeferredImportSelector {
        @Override
        public String[] selectImports(AnnotationMetadata metadata) {
            String[] all = new WebStack().selectImports(metadata);
            return java.util.Arrays.copyOfRange(all, 1, all.length);
        }
    }
}
