package dev.turnstile.jdbc;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A real, small file system (a tmpfs of a given size) that a test can fill up: what a full disk
 * looks like to SQLite. Needs root (mount); where mounting is not permitted the test is skipped,
 * except under {@code CI=true}, where it must run (CI runs as root).
 */
final class SmallDisk implements AutoCloseable {
    final Path dir;
    private Path filler;

    private SmallDisk(Path dir) {
        this.dir = dir;
    }

    static SmallDisk mount(Path dir, String size) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", dir.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        boolean mounted = p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        if (!mounted) {
            if ("true".equals(System.getenv("CI"))) {
                throw new IllegalStateException("cannot mount a tmpfs at " + dir + " (CI runs as root and must): " + out);
            }
            Assumptions.assumeTrue(false, "mounting a tmpfs is not permitted here: " + out);
        }
        return new SmallDisk(dir);
    }

    /** Writes a file until the disk refuses more (ENOSPC). */
    void fill() throws IOException {
        filler = dir.resolve("filler");
        byte[] block = new byte[512];
        try (OutputStream out = Files.newOutputStream(filler)) {
            while (true) {
                out.write(block);
                out.flush();
            }
        } catch (IOException full) {
            if (full.getMessage() == null || !full.getMessage().contains("No space left")) {
                throw full;
            }
        }
    }

    /** Frees what {@link #fill} took. */
    void free() throws IOException {
        if (filler != null) {
            Files.deleteIfExists(filler);
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("umount", "-l", dir.toString()).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        p.waitFor(10, TimeUnit.SECONDS);
    }
}
