package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Processes the harness may pause run in sessions of their own, under the pid the harness signals. */
class HarnessTest {

    @Test
    void aStartedProcessLeadsItsOwnSessionAndGroupUnderItsOwnPid() throws Exception {
        Process p = Harness.startInOwnSession(new ProcessBuilder("sleep", "30"));
        try {
            // the child is setsid until it has exec'd sleep: wait for that rather than race it
            String[] ids = {};
            for (long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5); System.nanoTime() < end; Thread.sleep(20)) {
                ids = Harness.exec(List.of("ps", "-o", "pid=,pgid=,sid=,comm=", "-p", Long.toString(p.pid())), 10)
                        .trim().split("\\s+");
                if (ids.length == 4 && ids[3].equals("sleep")) {
                    break;
                }
            }
            assertThat(ids).as("pid, pgid, sid, command").containsExactly(Long.toString(p.pid()), Long.toString(p.pid()),
                    Long.toString(p.pid()), "sleep");
            String harnessSession = Harness.exec(List.of("ps", "-o", "sid=", "-p", Long.toString(ProcessHandle.current().pid())), 10)
                    .trim();
            assertThat(harnessSession).isNotEqualTo(Long.toString(p.pid()));
            // and it is still the process the harness pauses and kills by pid
            Harness.signal(p.pid(), "STOP");
            Harness.signal(p.pid(), "KILL");
            assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            p.destroyForcibly();
        }
    }
}
