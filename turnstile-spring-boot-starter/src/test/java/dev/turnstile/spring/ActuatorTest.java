package dev.turnstile.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spring.actuate.TurnstileEndpoint;
import java.security.Principal;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** The store's health indicator and the {@code turnstile} endpoint. */
@ExtendWith(OutputCaptureExtension.class)
class ActuatorTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(Boot.turnstile())
            .withPropertyValues("management.endpoints.web.exposure.include=turnstile");

    @Test
    void healthUpWithTheStoreAndCounts() {
        runner.withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl()).run(ctx -> {
            Object indicator = ctx.getBean("turnstileHealthIndicator");
            try (Lease lease = ctx.getBean(Turnstile.class).tryAcquire(Boot.unique("health")).orElseThrow()) {
                assertThat(Boot.healthStatus(indicator)).isEqualTo("UP");
                assertThat(Boot.healthDetails(indicator)).containsEntry("locks", 1).containsEntry("heldByThisInstance", 1)
                        .hasEntrySatisfying("store", s -> assertThat((String) s).contains("sqlite"));
            }
        });
    }

    @Test
    void healthDownWithTheErrorWhenTheStoreIsUnreachable() {
        runner.withPropertyValues("turnstile.store.url=jdbc:postgresql://127.0.0.1:1/test?user=postgres").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            Object indicator = ctx.getBean("turnstileHealthIndicator");
            assertThat(Boot.healthStatus(indicator)).isEqualTo("DOWN");
            assertThat(Boot.healthDetails(indicator)).containsKey("error")
                    .hasEntrySatisfying("store", s -> assertThat((String) s).contains("127.0.0.1:1"));
        });
    }

    @Test
    void healthIndicatorCanBeTurnedOff() {
        runner.withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl(), "management.health.turnstile.enabled=false")
                .run(ctx -> assertThat(ctx).doesNotHaveBean("turnstileHealthIndicator"));
    }

    @Test
    void endpointListsLocksAndForceReleasesOneLoggingWhoAsked(CapturedOutput output) {
        runner.withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl(), "turnstile.owner=this-instance").run(ctx -> {
            TurnstileEndpoint endpoint = ctx.getBean(TurnstileEndpoint.class);
            Turnstile turnstile = ctx.getBean(Turnstile.class);
            Turnstile other = Turnstile.builder(turnstile.store()).owner("other-instance").build();
            String mine = Boot.unique("mine");
            String theirs = "jobs/" + Boot.unique("theirs");
            try (Lease a = turnstile.tryAcquire(mine, LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow();
                    Lease b = other.tryAcquire(theirs, LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow()) {
                TurnstileEndpoint.LocksReport report = endpoint.locks();
                assertThat(report.owner()).isEqualTo("this-instance");
                assertThat(report.locks()).extracting(TurnstileEndpoint.LockView::name).containsExactlyInAnyOrder(mine, theirs);
                assertThat(report.locks()).filteredOn(l -> l.name().equals(theirs)).singleElement()
                        .satisfies(l -> assertThat(l.owner()).isEqualTo("other-instance"))
                        .satisfies(l -> assertThat(l.expiresAt()).isNotNull());
                assertThat(report.heldByThisInstance()).extracting(TurnstileEndpoint.LockView::name).containsExactly(mine);

                Principal alice = () -> "alice";
                SecurityContext security = new SecurityContext() {
                    @Override
                    public Principal getPrincipal() {
                        return alice;
                    }

                    @Override
                    public boolean isUserInRole(String role) {
                        return false;
                    }
                };
                TurnstileEndpoint.ReleaseReport released = endpoint.release(theirs.split("/"), security);
                assertThat(released.released()).isTrue();
                assertThat(released.previousOwner()).isEqualTo("other-instance");
                assertThat(turnstile.heldLocks()).extracting(dev.turnstile.LockInfo::name).containsExactly(mine);
                assertThat(output).contains("WARN").contains("lock '" + theirs + "' force-released through the actuator endpoint by alice")
                        .contains("held by other-instance");

                assertThat(endpoint.release(new String[] {theirs}, SecurityContext.NONE).released()).isFalse();
                assertThat(output).contains("force-release of lock '" + theirs + "' asked through the actuator endpoint by anonymous: it was not held");
            } finally {
                other.close();
            }
        });
    }

    @Test
    void endpointOnlyWhenExposed() {
        new ApplicationContextRunner().withConfiguration(Boot.turnstile()).withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl())
                .run(ctx -> assertThat(ctx).doesNotHaveBean(TurnstileEndpoint.class));
    }
}
