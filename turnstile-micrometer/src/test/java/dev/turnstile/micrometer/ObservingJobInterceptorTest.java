package dev.turnstile.micrometer;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.Lease;
import dev.turnstile.Turnstile;
import dev.turnstile.job.JobOptions;
import dev.turnstile.job.JobResult;
import dev.turnstile.job.JobRunner;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The job observation through a real JobRunner on an SQLite store file. */
class ObservingJobInterceptorTest {
    private final TestObservationRegistry observations = TestObservationRegistry.create();
    private final String url = Stores.sqliteUrl();
    private final Turnstile turnstile = Turnstile.builder(Stores.sqlite(url)).build();
    private final Turnstile other = Turnstile.builder(Stores.sqlite(url)).build();

    @AfterEach
    void close() {
        turnstile.close();
        other.close();
        turnstile.store().close();
        other.store().close();
    }

    private JobRunner runner(ObservingJobInterceptor interceptor) {
        return JobRunner.builder(turnstile).interceptor(interceptor).build();
    }

    @Test
    void aLockedRunIsObservedWithTheLockAndFence() {
        AtomicReference<Object> current = new AtomicReference<>();
        JobResult<Void> result = runner(new ObservingJobInterceptor(observations))
                .run("nightly", () -> current.set(observations.getCurrentObservation()));

        assertThat(result.ran()).isTrue();
        assertThat(current.get()).as("the observation is in scope while the job runs").isNotNull();
        assertThat(observations)
                .hasNumberOfObservationsEqualTo(1)
                .hasSingleObservationThat()
                .hasNameEqualTo("turnstile.job")
                .hasContextualNameEqualTo("turnstile job nightly")
                .hasLowCardinalityKeyValue("turnstile.lock", "nightly")
                .hasLowCardinalityKeyValue("turnstile.lease.lost", "false")
                .hasHighCardinalityKeyValue("turnstile.fence", Long.toString(result.fence().orElseThrow()))
                .doesNotHaveError()
                .hasBeenStarted()
                .hasBeenStopped();
    }

    @Test
    void aSkippedRunIsNotObserved() {
        Lease held = other.tryAcquire("nightly").orElseThrow();
        JobResult<Void> result = runner(new ObservingJobInterceptor(observations)).run("nightly", () -> {});
        held.release();

        assertThat(result.skipped()).isTrue();
        assertThat(observations).doesNotHaveAnyObservation();
    }

    @Test
    void aFailingJobRecordsItsErrorAndStillThrows() {
        IllegalStateException boom = new IllegalStateException("boom");
        assertThatThrownBy(() -> runner(new ObservingJobInterceptor(observations)).run("nightly", () -> {
            throw boom;
        })).isSameAs(boom);

        assertThat(observations).hasSingleObservationThat().hasError(boom).hasBeenStopped();
    }

    @Test
    void aLeaseLostMidRunIsAKeyValue() {
        JobOptions options = JobOptions.builder().lockAtMostFor(Duration.ofMillis(600)).keepAlive(true).build();
        JobResult<Void> result = runner(new ObservingJobInterceptor(observations)).run("nightly", options, () -> {
            other.forceRelease("nightly"); // the next renewal is refused: the runner flags and interrupts the job
            try {
                Thread.sleep(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });

        assertThat(result.leaseLost()).isTrue();
        assertThat(observations).hasSingleObservationThat().hasLowCardinalityKeyValue("turnstile.lease.lost", "true");
    }

    @Test
    void aConventionOfTheUsersRenamesAndRetags() {
        TurnstileJobObservationConvention mine = new TurnstileJobObservationConvention() {
            @Override
            public String getName() {
                return "jobs.run";
            }

            @Override
            public KeyValues getLowCardinalityKeyValues(TurnstileJobObservationContext context) {
                return KeyValues.of("team", "billing");
            }
        };
        runner(new ObservingJobInterceptor(observations, mine)).run("nightly", () -> {});

        assertThat(observations).hasSingleObservationThat().hasNameEqualTo("jobs.run").hasLowCardinalityKeyValue("team", "billing")
                .doesNotHaveLowCardinalityKeyValueWithKey("turnstile.lock");
    }

    @Test
    void withTheMetricsHandlerEachRunIsATimer() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
        JobRunner runner = runner(new ObservingJobInterceptor(registry, new DefaultTurnstileJobObservationConvention(false)));
        runner.run("nightly", () -> {});
        runner.run("nightly", () -> {});

        assertThat(meters.get("turnstile.job").tag("turnstile.lease.lost", "false").tag("error", "none").timer().count()).isEqualTo(2);
        assertThat(meters.find("turnstile.job").tagKeys("turnstile.lock").timer()).as("no lock-name tag").isNull();
    }

    @Test
    void aNullRegistrySaysWhatToGive() {
        assertThatThrownBy(() -> new ObservingJobInterceptor(null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ObservationRegistry.NOOP");
    }
}
