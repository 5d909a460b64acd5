package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Library misuse through URLs: what the JDBC factory refuses, how fast it fails, what it never shows. */
class JdbcHostileTest {
    final JdbcLockStoreFactory factory = new JdbcLockStoreFactory();
    @TempDir Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"jdbc:sqlite:", "jdbc:sqlite::memory:", "jdbc:sqlite:file::memory:?cache=shared",
        "jdbc:sqlite:file:x?mode=memory", "jdbc:h2:mem:x", "JDBC:H2:MEM:x", "jdbc:sqlite:?turnstile.table=t",
        "jdbc:sqlite:file:/tmp/x.db?vfs=memdb", "jdbc:sqlite:file:/tmp/x.db?v%66s=memd%62", "jdbc:sqlite:file:/tmp/x?mode=memor%79",
        "jdbc:sqlite:/tmp/x.db?open_mode=134", "jdbc:sqlite::resource:x.db", "jdbc:sqlite:file:?x=1"})
    void inMemoryDatabasesAreNamedAsProcessLocal(String url) {
        assertThat(factory.processLocalReason(url)).isNotNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"jdbc:sqlite:/tmp/x.db", "jdbc:h2:/tmp/x", "jdbc:h2:tcp://h/x",
        "jdbc:postgresql://h/db", "jdbc:mariadb://h/db"})
    void sharedDatabasesAreNot(String url) {
        assertThat(factory.processLocalReason(url)).isNull();
    }

    /**
     * Each of these really gives two connections the same write transaction (checked with
     * sqlite-jdbc): SQLite takes no file lock, so two processes would both hold one lock.
     */
    @ParameterizedTest
    @ValueSource(strings = {"nolock=1", "nolo%63k=yes", "immutable=1", "vfs=unix-none", "vfs=win32-none", "vfs=unix-nonesuch"})
    void sqliteOptionsThatTurnOffFileLockingAreRefused(String option) {
        String url = "jdbc:sqlite:file:" + dir.resolve("nolock.db") + "?" + option;
        assertThatThrownBy(() -> factory.open(url)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(SqliteUrl.decode(option)).hasMessageContaining("two processes would both hold one lock");
        assertThat(dir.resolve("nolock.db")).doesNotExist();
    }

    @Test
    void sqliteVfsesThatLockAreAccepted() {
        for (String vfs : List.of("unix", "unix-dotfile", "unix-excl")) {
            try (LockStore s = factory.open("jdbc:sqlite:file:" + dir.resolve(vfs + ".db") + "?vfs=" + vfs)) {
                assertThat(s.heldLocks()).isEmpty();
            }
        }
    }

    /** SQLite decodes a file: URI and drops its localhost authority: the file-kind check must read it so. */
    @ParameterizedTest
    @ValueSource(strings = {"file://localhost/dev/null", "file:/dev/nul%6C", "file:///dev/%6Eull", "file://localhost/dev/nul%6c?x=1"})
    void encodedSqliteUrisOfADeviceAreRefusedAndLeaveNothing(String uri) {
        assertThatThrownBy(() -> factory.open("jdbc:sqlite:" + uri)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("SQLite path /dev/null is not a regular file");
        assertThat(Path.of("/dev/null-journal")).doesNotExist();
    }

    @Test
    void anEncodedSqliteUriOfAFifoIsRefused() throws Exception {
        Path fifo = dir.resolve("fifo1");
        assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor()).isZero();
        String encoded = fifo.toString().substring(0, fifo.toString().length() - 1) + "%31";
        assertThatThrownBy(() -> factory.open("jdbc:sqlite:file:" + encoded)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("SQLite path " + fifo + " is not a regular file");
        assertThat(JdbcLockStoreFactory.sqliteFile("jdbc:sqlite:file:%2Ftmp%2Fx.db?vfs=unix")).isEqualTo("/tmp/x.db");
    }

    @ParameterizedTest
    @ValueSource(strings = {"jdbc:postgresql://", "jdbc:postgresql:", "jdbc:postgresql://127.0.0.1:5432/",
        "jdbc:postgresql://127.0.0.1:5432", "jdbc:postgresql://:5432/test", "jdbc:mariadb://", "jdbc:mysql:///test",
        "jdbc:mariadb://127.0.0.1:3306/", "jdbc:postgresql://127.0.0.1:notaport/test"})
    void serverUrlsWithoutHostOrDatabaseAreUsageErrors(String url) {
        assertThatThrownBy(() -> factory.open(url)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("give one such as");
    }

    @Test
    void aMissingSqliteFileIsNotCreatedWhenCreateFileIsFalse() {
        Path db = dir.resolve("absent.db");
        assertThatThrownBy(() -> factory.open("jdbc:sqlite:" + db + "?turnstile.createFile=false"))
                .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("no SQLite database at " + db);
        assertThat(db).doesNotExist();
        assertThat(dir.resolve("absent.db-wal")).doesNotExist();
        try (LockStore s = factory.open("jdbc:sqlite:" + db)) {
            assertThat(s.heldLocks()).isEmpty(); // the default still creates it
        }
        try (LockStore s = factory.open("jdbc:sqlite:" + db + "?turnstile.createFile=false")) {
            assertThat(s.heldLocks()).isEmpty();
        }
    }

    @Test
    void aLockedSqliteFileFailsAfterTheBusyTimeoutOnce() throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve("busy.db");
        try (LockStore s = factory.open(url)) {
            s.heldLocks();
        }
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url);
                LockStore s = factory.open(url + "?turnstile.busyTimeout=300ms")) {
            s.heldLocks(); // the table exists; reads do not wait in WAL mode
            c.createStatement().execute("BEGIN IMMEDIATE");
            long start = System.nanoTime();
            assertThatThrownBy(() -> dev.turnstile.Turnstile.builder(s).build().tryAcquire("x",
                    dev.turnstile.LockOptions.lockAtMostFor(java.time.Duration.ofMinutes(1))))
                    .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("locked by another process");
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertThat(ms).as("one busy timeout, not one for the acquire and one for its undo").isBetween(250L, 550L);
            c.createStatement().execute("ROLLBACK");
        }
    }

    @Test
    void anUnreachableServerFailsWithoutHikarisExtraSecond() {
        long start = System.nanoTime();
        assertThatThrownBy(() -> factory.open("jdbc:postgresql://127.0.0.1:1/test?user=u"))
                .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("refused");
        assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(900);
    }

    @Test
    void aServerThatNeverAnswersCostsTheConnectTimeout() throws IOException {
        try (ServerSocket silent = new ServerSocket(0)) {
            List<Socket> accepted = new ArrayList<>();
            Thread t = new Thread(() -> {
                try {
                    while (true) {
                        accepted.add(silent.accept());
                    }
                } catch (IOException closed) {
                    // done
                }
            });
            t.setDaemon(true);
            t.start();
            for (String url : List.of("jdbc:postgresql://127.0.0.1:%d/test?user=u", "jdbc:mariadb://127.0.0.1:%d/test?user=u")) {
                long start = System.nanoTime();
                assertThatThrownBy(() -> factory.open(url.formatted(silent.getLocalPort()) + "&turnstile.connectTimeout=700"))
                        .isInstanceOf(StoreUnavailableException.class);
                assertThat((System.nanoTime() - start) / 1_000_000).as(url).isBetween(600L, 1600L);
            }
            for (Socket s : accepted) {
                s.close();
            }
        }
    }

    static final String SPECIALS = ":/?#[]@!$&'()*+,;=% \"<>\\^`{|}~";

    @Test
    void noMessageOrCauseShowsThePassword() {
        List<String> templates = List.of("jdbc:postgresql://u:%s@127.0.0.1:1/test", "jdbc:postgresql://127.0.0.1:1/test?user=u&password=%s",
                "jdbc:mariadb://root:%s@127.0.0.1:3306/test", "jdbc:mariadb://127.0.0.1:3306/test?user=root&password=%s",
                "jdbc:mariadb://root:%s@127.0.0.1:bad/test", "jdbc:mysql://root:%s@127.0.0.1:3306/test",
                "jdbc:postgresql://u:%s@127.0.0.1:notaport/test", "jdbc:h2:tcp://127.0.0.1:1/x;USER=sa;PASSWORD=%s");
        for (int seed = 0; seed < 3; seed++) {
            String pw = "Pw" + seed + SPECIALS + "Zq" + seed;
            String enc = URLEncoder.encode(pw, StandardCharsets.UTF_8).replace("+", "%20");
            for (String template : templates) {
                for (String form : List.of(pw, enc)) {
                    if (form.equals(pw) && !template.contains("//u:%s@") && !template.contains("//root:%s@")) {
                        continue; // only user info can even hold a raw password
                    }
                    String url = template.replace("%s", form);
                    Throwable thrown = null;
                    try (LockStore s = LockStores.open(url)) {
                        s.heldLocks();
                    } catch (RuntimeException e) {
                        thrown = e;
                    }
                    assertThat(thrown).as(url).isNotNull();
                    StringWriter trace = new StringWriter();
                    thrown.printStackTrace(new PrintWriter(trace));
                    assertThat(trace.toString()).as(template + " " + (form.equals(pw) ? "raw" : "encoded"))
                            .doesNotContain(pw).doesNotContain(enc).doesNotContain("Pw" + seed + ":/").doesNotContain("Pw" + seed + "%3A");
                }
            }
        }
    }

    @Test
    void tablesAreNotSplicedWhateverTheUrlSays() {
        assertThatThrownBy(() -> factory.open("jdbc:sqlite:" + dir.resolve("t.db") + "?turnstile.table=x;drop"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("plain SQL identifier");
        assertThat(Files.exists(dir.resolve("t.db"))).isFalse();
    }
    /**
     * The store on a 256 KiB disk, the disk filled: SQLite runs the upsert and hands back its
     * RETURNING row before the commit, which then fails with SQLITE_FULL. Before, that error was
     * lost when the statement was closed, so two stores were both granted fence 1 of a lock that
     * no row recorded. Now neither is granted, both are told the disk is full, and once space is
     * freed the first grant is fence 1 (nothing was committed).
     */
    @Test
    void aFullDiskGrantsNothingAndSaysSo() throws Exception {
        try (SmallDisk disk = SmallDisk.mount(dir.resolve("small"), "256k")) {
            String url = "jdbc:sqlite:" + disk.dir.resolve("locks.db");
            try (LockStore a = factory.open(url); LockStore b = factory.open(url)) {
                assertThat(a.heldLocks()).isEmpty();
                assertThat(b.heldLocks()).isEmpty();
                assertThat(a.tryAcquire(new dev.turnstile.spi.AcquireRequest("y", "o", "ty", java.time.Duration.ofMinutes(1))))
                        .isPresent();
                disk.fill();
                // extend and release write too: each is an error, never "done" (nor "not held")
                assertThatThrownBy(() -> a.extend("y", "ty", java.time.Duration.ofMinutes(5)))
                        .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("disk that holds the database is full");
                assertThatThrownBy(() -> a.release("y", "ty", java.time.Duration.ZERO))
                        .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("disk that holds the database is full");
                for (LockStore s : List.of(a, b)) {
                    assertThatThrownBy(() -> s.tryAcquire(new dev.turnstile.spi.AcquireRequest("z", "o", "t-" + s.hashCode(),
                            java.time.Duration.ofMinutes(1))))
                            .isInstanceOf(StoreUnavailableException.class)
                            .hasMessageContaining("disk that holds the database is full").hasMessageContaining("SQLITE_FULL");
                }
                disk.free();
                assertThat(a.heldLocks()).extracting(dev.turnstile.LockInfo::name).containsExactly("y");
                assertThat(a.release("y", "ty", java.time.Duration.ZERO)).isTrue();
                assertThat(a.tryAcquire(new dev.turnstile.spi.AcquireRequest("z", "o", "ta", java.time.Duration.ofMinutes(1))))
                        .hasValueSatisfying(g -> assertThat(g.fence()).isEqualTo(1));
                assertThat(b.tryAcquire(new dev.turnstile.spi.AcquireRequest("z", "o", "tb", java.time.Duration.ofMinutes(1))))
                        .isEmpty();
            }
        }
    }
}
