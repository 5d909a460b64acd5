package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The CI run of the CLI faults: one round each of `turnstile run` processes SIGKILLed, SIGSTOPped
 * past their TTL, partitioned from the store, and of their command SIGKILLed; no two commands may
 * ever be alive at once. The documented exception (JVM and guard frozen together) runs too, to
 * show that the checker sees what the fence is there for. Report: target/cli-chaos-ci.md.
 */
class CliChaosTest {

    @Test
    @Timeout(300)
    void noTwoCommandsEverRunAtOnceWhateverHappensToTurnstile() throws Exception {
        List<CliChaos.Result> results = new ArrayList<>();
        for (String fault : CliChaos.FAULTS) {
            CliChaos.Result r = CliChaos.run(fault, 1, Path.of("target/cli-chaos-ci"));
            System.out.println(CliChaos.line(r));
            results.add(r);
        }
        Files.writeString(Path.of("target/cli-chaos-ci.md"), CliChaos.table(results, "mvn -pl turnstile-chaos test (CliChaosTest)"));
        for (CliChaos.Result r : results) {
            assertThat(r.passed()).as(CliChaos.line(r) + " in " + r.dir()).isTrue();
            if (!r.expectsOverlap()) {
                assertThat(r.log().overlaps()).as(r.fault()).isEmpty();
                assertThat(r.log().staleLines()).as(r.fault()).isZero();
            }
        }
        CliChaos.Result frozen = results.get(results.size() - 1);
        assertThat(frozen.fault()).isEqualTo("freeze-both");
        assertThat(frozen.log().overlaps()).as("with JVM and guard frozen, nothing on the host stops the command").isNotEmpty();
    }
}
