package dev.turnstile.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Every duration property of the starter refuses, at start-up, a value outside its range, with a
 * message naming the property and the range. Before, {@code turnstile.shutdown.await-running=-1s}
 * started, and at shutdown released running methods' leases at once (another instance could then
 * start the same job while it still ran); a huge one overflowed when turned into nanoseconds.
 */
class PropertyRangeTest {

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
        "turnstile.shutdown.await-running    | -1s                  | 0s to 1d",
        "turnstile.shutdown.await-running    | PT-0.001S            | 0s to 1d",
        "turnstile.shutdown.await-running    | 2d                   | 0s to 1d",
        "turnstile.shutdown.await-running    | 200000d              | 0s to 1d",
        "turnstile.shutdown.await-running    | PT2562047788015H     | 0s to 1d",
        "turnstile.defaults.lock-at-most-for | -30s                 | 10ms to 366d",
        "turnstile.defaults.lock-at-most-for | 0s                   | 10ms to 366d",
        "turnstile.defaults.lock-at-most-for | 367d                 | 10ms to 366d",
        "turnstile.defaults.lock-at-most-for | 200000d              | 10ms to 366d",
        "turnstile.defaults.lock-at-least-for | -1ms                | 0s to 366d",
        "turnstile.defaults.lock-at-least-for | 9999999d            | 0s to 366d"})
    void outOfRangeDurationsStopTheStartWithThePropertyAndItsRange(String property, String value, String range) {
        new ApplicationContextRunner().withConfiguration(Boot.turnstile())
                .withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl(), property + "=" + value)
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    StringBuilder all = new StringBuilder();
                    for (Throwable t = ctx.getStartupFailure(); t != null; t = t.getCause()) {
                        all.append(t.getMessage()).append('\n');
                    }
                    assertThat(all.toString()).contains(property + " is ").contains("give " + range);
                });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
        "turnstile.shutdown.await-running    | 0s",
        "turnstile.shutdown.await-running    | 1d",
        "turnstile.defaults.lock-at-most-for | 10ms",
        "turnstile.defaults.lock-at-most-for | 366d",
        "turnstile.defaults.lock-at-least-for | 0s"})
    void theEndsOfEachRangeStart(String property, String value) {
        new ApplicationContextRunner().withConfiguration(Boot.turnstile())
                .withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl(), property + "=" + value)
                .run(ctx -> assertThat(ctx).hasNotFailed());
    }

    /** Too large for a Duration at all: Spring Boot's binder refuses it, naming the property and the value. */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"106751991167301d", "PT2562047788015216H"})
    void valuesThatAreNoDurationAtAllStopTheStartToo(String value) {
        new ApplicationContextRunner().withConfiguration(Boot.turnstile())
                .withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl(), "turnstile.shutdown.await-running=" + value)
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    StringBuilder all = new StringBuilder();
                    for (Throwable t = ctx.getStartupFailure(); t != null; t = t.getCause()) {
                        all.append(t.getMessage()).append('\n');
                    }
                    assertThat(all.toString()).contains("turnstile.shutdown.await-running").contains(value);
                });
    }

    @org.junit.jupiter.api.Test
    void theRangeCheckNamesAnEmptyValue() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new TurnstileProperties.Shutdown().setAwaitRunning(null))
                .hasMessage("turnstile.shutdown.await-running is empty: give 0s to 1d (e.g. 30s, 5m, 2h)");
        assertThat(TurnstileProperties.inRange("p", Duration.ofMinutes(5), Duration.ZERO, Duration.ofDays(1)))
                .isEqualTo(Duration.ofMinutes(5));
    }
}
