package dev.turnstile.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.Lease;
import dev.turnstile.LockInfo;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.job.JobContext;
import dev.turnstile.job.LockAssert;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The annotation on plain method calls: names, durations, defaults, skipping and bad input. */
class TurnstileLockTest {

    /** The lease seen inside the method: name and TTL (expires - acquired, by the store's clock). */
    record Seen(String name, Duration ttl, long fence) {
        static Seen now() {
            JobContext ctx = JobContext.current().orElseThrow();
            Lease lease = ctx.lease();
            return new Seen(ctx.name(), Duration.between(lease.acquiredAt(), lease.expiresAt()), ctx.fence());
        }
    }

    @TurnstileLockDefaults(lockAtMostFor = "${jobs.class-ttl}")
    static class Jobs {
        final AtomicInteger runs = new AtomicInteger();

        /** Read through the proxy: the proxy's own fields are not the target's. */
        public int runs() {
            return runs.get();
        }

        @TurnstileLock(name = "${jobs.name}", lockAtMostFor = "PT7S")
        public Seen placeholders() {
            runs.incrementAndGet();
            LockAssert.assertLocked();
            return Seen.now();
        }

        @TurnstileLock(name = "class-defaults")
        public Seen classDefaults() {
            return Seen.now();
        }

        @TurnstileLock(name = "order-#{#orderId}-#{#p1.toUpperCase()}", lockAtMostFor = "2m")
        public Seen dynamic(long orderId, String region) {
            return Seen.now();
        }

        @TurnstileLock(name = "#{#key}")
        public Seen dynamicRaw(String key) {
            return Seen.now();
        }

        @TurnstileLock(name = "#{#nothing.length()}")
        public Seen spelFailsAtCall(String nothing) {
            return Seen.now();
        }

        @TurnstileLock(name = "busy-target")
        public String busy() {
            runs.incrementAndGet();
            return "ran";
        }

        @TurnstileLock(name = "busy-target")
        public Optional<String> busyOptional() {
            runs.incrementAndGet();
            return Optional.of("ran");
        }

        @TurnstileLock(name = "busy-target")
        public void busyVoid() {
            runs.incrementAndGet();
        }

        @TurnstileLock(name = "at-least", lockAtLeastFor = "1s")
        public void atLeast() {
            runs.incrementAndGet();
        }

        @TurnstileLock(name = "throws")
        public void fails() {
            throw new IllegalStateException("job failed");
        }

        public void notLocked() {
            LockAssert.assertLocked();
        }
    }

    static class AppDefaultsJobs {
        @TurnstileLock(name = "app-defaults")
        public Seen appDefaults() {
            return Seen.now();
        }

        @TurnstileLock(name = "busy-target")
        public String callsSameName(Jobs jobs) {
            return "outer ran, inner returned " + jobs.busy();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class JobsConfig {
        @Bean
        Jobs jobs() {
            return new Jobs();
        }

        @Bean
        AppDefaultsJobs appDefaultsJobs() {
            return new AppDefaultsJobs();
        }
    }

    private final String prefix = Boot.unique("lock");

    private ApplicationContextRunner runner(Class<?> config, String... properties) {
        return new ApplicationContextRunner().withConfiguration(Boot.turnstile()).withUserConfiguration(config)
                .withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl(), "jobs.name=" + prefix + "-job", "jobs.class-ttl=45s")
                .withPropertyValues(properties);
    }

    private void withJobs(ContextConsumer<AssertableApplicationContext> test) {
        runner(JobsConfig.class, "turnstile.defaults.lock-at-most-for=90s").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            test.accept(ctx);
        });
    }

    @Test
    void placeholdersInNameAndDurations() {
        withJobs(ctx -> {
            Seen seen = ctx.getBean(Jobs.class).placeholders();
            assertThat(seen.name()).isEqualTo(prefix + "-job");
            assertThat(seen.ttl()).isEqualTo(Duration.ofSeconds(7));
            assertThat(seen.fence()).isPositive();
            assertThat(ctx.getBean(Turnstile.class).heldLocks()).extracting(LockInfo::name).doesNotContain(prefix + "-job");
        });
    }

    @Test
    void classDefaultsThenApplicationDefaults() {
        withJobs(ctx -> {
            assertThat(ctx.getBean(Jobs.class).classDefaults().ttl()).isEqualTo(Duration.ofSeconds(45));
            assertThat(ctx.getBean(AppDefaultsJobs.class).appDefaults().ttl()).isEqualTo(Duration.ofSeconds(90));
        });
    }

    @Test
    void spelNameFromArguments() {
        withJobs(ctx -> {
            Seen seen = ctx.getBean(Jobs.class).dynamic(42, "eu");
            assertThat(seen.name()).isEqualTo("order-42-EU");
            assertThat(seen.ttl()).isEqualTo(Duration.ofMinutes(2));
            assertThat(ctx.getBean(Jobs.class).dynamicRaw(prefix).name()).isEqualTo(prefix);
        });
    }

    @Test
    void spelNameThatFailsOrIsEmptyFailsTheCallNamingTheMethod() {
        withJobs(ctx -> {
            Jobs jobs = ctx.getBean(Jobs.class);
            assertThatThrownBy(() -> jobs.dynamicRaw(""))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("@TurnstileLock on " + Jobs.class.getName() + ".dynamicRaw(String)")
                    .hasMessageContaining("evaluated to an empty name");
            assertThatThrownBy(() -> jobs.dynamicRaw(" padded "))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("evaluated to an invalid name")
                    .hasMessageContaining("white space");
            assertThatThrownBy(() -> jobs.spelFailsAtCall(null))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("spelFailsAtCall(String)").hasMessageContaining("could not be evaluated");
        });
    }

    @Test
    void busyCallIsSkippedAndReturnsNullOrEmpty() {
        withJobs(ctx -> {
            Jobs jobs = ctx.getBean(Jobs.class);
            Turnstile other = Turnstile.builder(ctx.getBean(Turnstile.class).store()).owner("other-instance").build();
            try (Lease held = other.tryAcquire("busy-target", LockOptions.lockAtMostFor(Duration.ofSeconds(30))).orElseThrow()) {
                assertThat(jobs.busy()).isNull();
                assertThat(jobs.busyOptional()).isEmpty();
                jobs.busyVoid();
                assertThat(jobs.runs()).isZero();
            }
            assertThat(jobs.busy()).isEqualTo("ran");
            assertThat(jobs.busyOptional()).contains("ran");
            assertThat(jobs.runs()).isEqualTo(2);
        });
    }

    @Test
    void sameNameFromInsideALockedCallIsBusy() {
        withJobs(ctx -> {
            Jobs jobs = ctx.getBean(Jobs.class);
            assertThat(ctx.getBean(AppDefaultsJobs.class).callsSameName(jobs)).isEqualTo("outer ran, inner returned null");
            assertThat(jobs.runs()).isZero();
        });
    }

    @Test
    void lockAtLeastForKeepsTheLockAfterAFastRun() {
        withJobs(ctx -> {
            Jobs jobs = ctx.getBean(Jobs.class);
            jobs.atLeast();
            jobs.atLeast(); // within the second: skipped
            assertThat(jobs.runs()).isEqualTo(1);
            assertThat(ctx.getBean(Turnstile.class).heldLocks()).extracting(LockInfo::name).contains("at-least");
        });
    }

    @Test
    void exceptionsPropagateAndTheLockIsReleased() {
        withJobs(ctx -> {
            Jobs jobs = ctx.getBean(Jobs.class);
            assertThatThrownBy(jobs::fails).isInstanceOf(IllegalStateException.class).hasMessage("job failed");
            assertThat(ctx.getBean(Turnstile.class).heldLocks()).extracting(LockInfo::name).doesNotContain("throws");
            assertThatThrownBy(jobs::notLocked).isInstanceOf(IllegalStateException.class);
        });
    }

    // --- bad input: the application does not start, and the message names the method and the fix

    static class BlankName {
        @TurnstileLock(name = " ")
        public void job() {}
    }

    static class BadDuration {
        @TurnstileLock(name = "x", lockAtMostFor = "10 parsecs")
        public void job() {}
    }

    static class MissingPlaceholder {
        @TurnstileLock(name = "${no.such.property}")
        public void job() {}
    }

    static class SpelSyntax {
        @TurnstileLock(name = "x-#{#a +}")
        public void job(String a) {}
    }

    static class UnknownArgument {
        @TurnstileLock(name = "x-#{#b}")
        public void job(String a) {}
    }

    static class AtLeastOverAtMost {
        @TurnstileLock(name = "x", lockAtMostFor = "10s", lockAtLeastFor = "1m")
        public void job() {}
    }

    static class PrimitiveReturn {
        @TurnstileLock(name = "x")
        public int job() {
            return 1;
        }
    }

    static class InvalidStaticName {
        @TurnstileLock(name = "bad\u0007name")
        public void job() {}
    }

    static class TypeInName {
        @TurnstileLock(name = "x-#{T(java.lang.System).getProperty('user.home')}")
        public void job() {}
    }

    static class ConstructorInName {
        @TurnstileLock(name = "x-#{new java.io.File('/tmp').exists()}")
        public void job() {}
    }

    static class PlaceholderInsideExpression {
        @TurnstileLock(name = "x-#{'${example.lock-name:a}' + #a}")
        public void job(String a) {}
    }

    static class ExpressionInsidePlaceholder {
        @TurnstileLock(name = "${example.lock-name:#{#a}}")
        public void job(String a) {}
    }

    private void failsToStart(Class<?> bean, String... messages) {
        new ApplicationContextRunner().withConfiguration(Boot.turnstile()).withBean(bean)
                .withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl())
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    Throwable failure = ctx.getStartupFailure();
                    StringBuilder all = new StringBuilder();
                    for (Throwable t = failure; t != null; t = t.getCause()) {
                        all.append(t.getMessage()).append('\n');
                    }
                    assertThat(all.toString()).contains("@TurnstileLock on " + bean.getName() + ".job(");
                    for (String m : messages) {
                        assertThat(all.toString()).contains(m);
                    }
                });
    }

    @Test
    void badInputFailsStartUp() {
        failsToStart(BlankName.class, "the lock name is blank");
        failsToStart(BadDuration.class, "lockAtMostFor '10 parsecs' is not a duration", "such as 500ms, 30s");
        failsToStart(MissingPlaceholder.class, "no.such.property", "set the property, or give a default as ${name:default}");
        failsToStart(SpelSyntax.class, "is not a valid SpEL template");
        failsToStart(UnknownArgument.class, "refers to #b, which is not a parameter of the method (its parameters are a)");
        failsToStart(AtLeastOverAtMost.class, "lockAtLeastFor");
        failsToStart(PrimitiveReturn.class, "returns int", "Optional");
        failsToStart(InvalidStaticName.class, "control character");
        failsToStart(TypeInName.class, "no T(...) types");
        failsToStart(ConstructorInName.class, "'new' constructors");
        failsToStart(PlaceholderInsideExpression.class, "placeholders are not resolved inside #{...}");
        failsToStart(ExpressionInsidePlaceholder.class, "placeholder values are text, never SpEL");
    }

    // --- hostile configuration: a property or environment value is data, never SpEL

    static class FromConfiguration {
        @TurnstileLock(name = "${example.lock-name}")
        public Seen configured() {
            return Seen.now();
        }

        @TurnstileLock(name = "${example.prefix}-#{#id}")
        public Seen configuredPrefix(long id) {
            return Seen.now();
        }

        @TurnstileLock(name = "#{@jobNames.of(#id)}-#{#root.kind}")
        public Seen fromBean(long id) {
            return Seen.now();
        }

        public String getKind() {
            return "kind";
        }

        @TurnstileLock(name = "#{#p0.getClass().getName()}")
        public Seen classOfArgument(String a) {
            return Seen.now();
        }
    }

    public static class JobNames {
        public String of(long id) {
            return "bean-" + id;
        }
    }

    /**
     * The environment variable EXAMPLE_LOCK_NAME (relaxed to example.lock-name, as Boot binds it)
     * holds SpEL that would create a file and read a system property. Before, the starter parsed
     * resolved placeholder values as SpEL with a full context: the file was created on every call.
     * Now the values are the name's text, and nothing runs.
     */
    @Test
    void spelInAnEnvironmentValueIsTextAndRunsNothing(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        java.nio.file.Path marker = dir.resolve("pwned");
        String exec = "x-#{T(java.lang.Runtime).getRuntime().exec(new String[]{'touch','" + marker + "'})}";
        String prefix = "#{T(java.lang.System).getProperty('user.home')}";
        new ApplicationContextRunner().withConfiguration(Boot.turnstile())
                .withBean(FromConfiguration.class).withBean("jobNames", JobNames.class)
                .withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl())
                .withInitializer(ctx -> ctx.getEnvironment().getPropertySources().addFirst(
                        new org.springframework.core.env.SystemEnvironmentPropertySource("hostile-env",
                                java.util.Map.of("EXAMPLE_LOCK_NAME", exec, "EXAMPLE_PREFIX", prefix))))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    FromConfiguration jobs = ctx.getBean(FromConfiguration.class);
                    assertThat(jobs.configured().name()).isEqualTo(exec);
                    assertThat(jobs.configured().name()).isEqualTo(exec);
                    assertThat(jobs.configuredPrefix(7).name()).isEqualTo(prefix + "-7");
                    Thread.sleep(200); // a process started by exec would have created it by now
                    assertThat(marker).doesNotExist();
                    // what the annotation itself writes still works: arguments, @beans, #root's properties
                    assertThat(jobs.fromBean(3).name()).isEqualTo("bean-3-kind");
                    // the context is read-only data binding: no getClass(), so no reflection
                    assertThatThrownBy(() -> jobs.classOfArgument("a")).isInstanceOf(IllegalArgumentException.class)
                            .hasMessageContaining("could not be evaluated");
                });
    }
}
