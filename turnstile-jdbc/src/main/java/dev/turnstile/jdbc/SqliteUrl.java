package dev.turnstile.jdbc;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A {@code jdbc:sqlite:} URL read the way sqlite-jdbc and SQLite read it: the file SQLite opens, and
 * the options that decide whether that file is shared and locked. Checks on the raw text are
 * bypassed by what SQLite decodes ({@code file:/dev/nul%6C}, {@code file://localhost/dev/null},
 * {@code ?v%66s=memdb}), so every check reads the decoded form.
 */
final class SqliteUrl {
    /** SQLITE_OPEN_MEMORY: the driver's {@code open_mode} flag for a database in memory. */
    private static final int SQLITE_OPEN_MEMORY = 0x80;
    /**
     * VFSes that lock the file between processes: the default, dot-file locking, and unix-excl (which
     * keeps other processes out entirely). Others are refused: {@code unix-none} and
     * {@code win32-none} lock nothing, {@code memdb} keeps the database in memory, and a name SQLite
     * does not have would fail anyway.
     */
    private static final Set<String> LOCKING_VFS = Set.of("unix", "unix-dotfile", "unix-excl", "win32", "win32-longpath");

    private final boolean uri;
    private final String path;
    private final List<String[]> parameters;

    private SqliteUrl(boolean uri, String path, List<String[]> parameters) {
        this.uri = uri;
        this.path = path;
        this.parameters = parameters;
    }

    static SqliteUrl parse(String jdbcUrl) {
        String rest = jdbcUrl.substring("jdbc:sqlite:".length());
        int q = rest.indexOf('?');
        String name = q < 0 ? rest : rest.substring(0, q);
        List<String[]> parameters = new ArrayList<>();
        if (q >= 0) {
            // the driver takes its own options (open_mode, journal_mode…) out of this list, and passes
            // the rest to SQLite, which decodes them; a '#' ends SQLite's list, but reading past it
            // only refuses more
            // split's dropping of trailing empty pairs ("?a=1&") is wanted: SQLite ignores them too
            @SuppressWarnings("StringSplitter")
            String[] pairs = rest.substring(q + 1).split("&");
            for (String pair : pairs) {
                int eq = pair.indexOf('=');
                String key = eq < 0 ? pair : pair.substring(0, eq);
                String value = eq < 0 ? "" : pair.substring(eq + 1);
                parameters.add(new String[] {decode(key).trim().toLowerCase(Locale.ROOT), decode(value).trim()});
            }
        }
        // SQLite reads a name as a URI only when it starts with "file:" in lower case (so does the driver)
        if (!name.startsWith("file:")) {
            return new SqliteUrl(false, name, parameters);
        }
        String p = name.substring(5);
        int hash = p.indexOf('#');
        if (hash >= 0) {
            p = p.substring(0, hash);
        }
        // SQLite drops an empty or "localhost" authority (another one is an error it reports)
        if (p.startsWith("//")) {
            int slash = p.indexOf('/', 2);
            String authority = slash < 0 ? p.substring(2) : p.substring(2, slash);
            if (authority.isEmpty() || authority.equals("localhost")) {
                p = slash < 0 ? "" : p.substring(slash);
            }
        }
        return new SqliteUrl(true, decode(p), parameters);
    }

    /** The file SQLite opens, decoded; empty for a private temporary database. */
    String path() {
        return path;
    }

    boolean isUri() {
        return uri;
    }

    /** Why a database opened from this URL lives in one process only, or {@code null}. */
    @Nullable String processLocalReason() {
        if (path.isEmpty()) {
            return "jdbc:sqlite: without a file path is a private temporary database of one process"
                    + " (an unset variable in the URL?)";
        }
        if (path.equals(":memory:") || path.startsWith(":memory:")) {
            return "jdbc:sqlite::memory: is an in-memory database of one process";
        }
        if (path.startsWith(":resource:")) {
            return "jdbc:sqlite::resource: opens a copy of the resource that each process makes for itself";
        }
        for (String[] kv : parameters) {
            if (kv[0].equals("mode") && kv[1].equalsIgnoreCase("memory")) {
                return "mode=" + kv[1] + " makes an in-memory database of one process";
            }
            if (kv[0].equals("vfs") && kv[1].equalsIgnoreCase("memdb")) {
                return "vfs=" + kv[1] + " keeps the database in the memory of one process (nothing is written to "
                        + path + ")";
            }
            if (kv[0].equals("open_mode") && openModeInMemory(kv[1])) {
                return "open_mode=" + kv[1] + " has SQLITE_OPEN_MEMORY (0x80): an in-memory database of one process";
            }
        }
        return null;
    }

    /**
     * Why the file would not be locked between connections, or {@code null}: two processes would
     * both take the same lock.
     */
    @Nullable String lockingProblem() {
        for (String[] kv : parameters) {
            String option = kv[0] + "=" + kv[1];
            switch (kv[0]) {
                case "nolock" -> {
                    return option + " turns off SQLite's file locking: two processes would both hold one lock;"
                            + " remove it";
                }
                case "immutable" -> {
                    return option + " tells SQLite the file never changes, so it takes no locks and does not see"
                            + " other processes' writes: two processes would both hold one lock; remove it";
                }
                case "vfs" -> {
                    if (!LOCKING_VFS.contains(kv[1]) && !kv[1].equalsIgnoreCase("memdb")) {
                        return option + " is not a SQLite VFS that locks the file between processes"
                                + (kv[1].endsWith("-none") ? " (it locks nothing)" : "")
                                + ": two processes would both hold one lock; remove it, or give one of "
                                + String.join(", ", LOCKING_VFS.stream().sorted().toList());
                    }
                }
                default -> { }
            }
        }
        return null;
    }

    private static boolean openModeInMemory(String value) {
        try {
            return (Integer.decode(value) & SQLITE_OPEN_MEMORY) != 0;
        } catch (NumberFormatException e) {
            return false; // the driver refuses it
        }
    }

    /**
     * Percent-decoding as SQLite does it: {@code %} and two hex digits is a byte (UTF-8), anything
     * else is kept as it is, and {@code %00} ends the text.
     */
    static String decode(String s) {
        if (s.indexOf('%') < 0) {
            return s;
        }
        byte[] in = s.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream(in.length);
        for (int i = 0; i < in.length; i++) {
            if (in[i] == '%' && i + 2 < in.length && hex(in[i + 1]) >= 0 && hex(in[i + 2]) >= 0) {
                int octet = hex(in[i + 1]) << 4 | hex(in[i + 2]);
                if (octet == 0) {
                    break;
                }
                out.write(octet);
                i += 2;
            } else {
                out.write(in[i]);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static int hex(byte b) {
        return Character.digit(b, 16);
    }
}
