package dev.turnstile.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.StoreUnavailableException;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** A locked call when the store cannot be reached: skipped and logged at ERROR, or failed, per policy. */
@ExtendWith(OutputCaptureExtension.class)
class StoreFailureTest {

    static class Job {
        @TurnstileLock(name = "unreachable-job")
        public Optional<String> run() {
            return Optional.of("ran");
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(Boot.turnstile())
            .withBean(Job.class).withPropertyValues("turnstile.store.url=jdbc:postgresql://127.0.0.1:1/test?user=postgres");

    @Test
    void skippedAndLoggedAtErrorByDefault(CapturedOutput output) {
        runner.run(ctx -> {
            assertThat(ctx.getBean(Job.class).run()).isEmpty();
            assertThat(output).contains("ERROR").contains("job 'unreachable-job' skipped: the lock store is unavailable");
        });
    }

    @Test
    void failsTheCallWithPolicyFail() {
        runner.withPropertyValues("turnstile.defaults.on-store-unavailable=fail").run(ctx ->
                assertThatThrownBy(() -> ctx.getBean(Job.class).run()).isInstanceOf(StoreUnavailableException.class));
    }
}
