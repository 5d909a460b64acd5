package dev.turnstile.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.sqlite.util.LibraryLoaderUtil;

/**
 * Copies sqlite-jdbc's native library for this platform out of the jar, once, so that
 * {@code bin/turnstile} can hand it to the driver ({@code -Dorg.sqlite.lib.path} and
 * {@code org.sqlite.lib.name}). Left to itself the driver unpacks the library to a new temporary
 * file on every start, compares it byte by byte and probes the platform with {@code uname}: about
 * a fifth of a {@code turnstile run}'s start-up.
 *
 * <p>Usage: {@code java -cp turnstile-all.jar dev.turnstile.cli.SqliteNativeLibrary DIR}. Prints the
 * library's file name; the file in DIR is replaced atomically, so a run that loads it meanwhile
 * sees the old or the new file, never half of one. Exits 1 if the jar has no library for this
 * platform (the driver then fails the same way at run time).
 */
public final class SqliteNativeLibrary {
    private SqliteNativeLibrary() {}

    /**
     * Extracts the library into the directory given as the only argument.
     *
     * @param args the target directory
     */
    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: SqliteNativeLibrary DIR");
            System.exit(64);
        }
        try {
            System.out.println(extract(Path.of(args[0])).getFileName());
        } catch (IllegalStateException e) {
            System.err.println("turnstile: " + e.getMessage());
            System.exit(1);
        }
    }

    /**
     * Extracts the library for this platform into {@code dir}, replacing any earlier copy.
     *
     * @param dir the directory, created if missing
     * @return the library file
     * @throws IllegalStateException if the jar holds no library for this platform
     * @throws UncheckedIOException if the directory or file cannot be written
     */
    static Path extract(Path dir) {
        String name = LibraryLoaderUtil.getNativeLibName();
        String resource = LibraryLoaderUtil.getNativeLibResourcePath() + "/" + name;
        try (InputStream in = SqliteNativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("sqlite-jdbc has no native library for this platform (" + resource + ")");
            }
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, name, ".tmp");
            try {
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                return Files.move(tmp, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the SQLite native library to " + dir, e);
        }
    }
}
