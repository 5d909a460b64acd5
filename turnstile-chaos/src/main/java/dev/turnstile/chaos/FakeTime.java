package dev.turnstile.chaos;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * libfaketime for the clock-jump fault: a worker JVM started with it preloaded reads its wall-clock
 * offset from a file the harness rewrites, while {@code FAKETIME_DONT_FAKE_MONOTONIC=1} leaves
 * {@code System.nanoTime()} alone (the JVM misbehaves otherwise, and the events' shared clock must
 * stay true), and {@code FAKETIME_FORCE_MONOTONIC_FIX=0} keeps libfaketime 0.9.10 from slowing the
 * JVM's timed waits to a crawl. Installed with apt-get when missing; never skipped silently.
 */
final class FakeTime {
    private static final List<String> CANDIDATES = List.of(
            "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
            "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
            "/usr/lib/faketime/libfaketime.so.1",
            "/usr/local/lib/faketime/libfaketime.so.1");

    private FakeTime() {}

    /** The library's path, installing the {@code faketime} package if it is missing. */
    static synchronized Path library() {
        Path found = find();
        if (found != null) {
            return found;
        }
        String why;
        try {
            Harness.exec(List.of("sh", "-c", "command -v apt-get >/dev/null && [ \"$(id -u)\" = 0 ] && "
                    + "{ DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null 2>&1 || "
                    + "{ apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null; }; }"), 600);
            why = "apt-get install faketime ran, but no libfaketime.so.1 is in " + CANDIDATES;
        } catch (IllegalStateException e) {
            why = e.getMessage();
        }
        found = find();
        if (found == null) {
            throw new IllegalStateException("the clock-jump fault needs libfaketime and it could not be installed (" + why
                    + "). Install it with 'apt-get install faketime' (as root), or leave the clock fault out with --faults.");
        }
        return found;
    }

    private static Path find() {
        return CANDIDATES.stream().map(Path::of).filter(Files::isReadable).findFirst().orElse(null);
    }
}
