package example;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.jdbc.JdbcLockStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.sqlite.SQLiteDataSource;

/** Takes a lock on a SQLite file, checks that a second try finds it busy, and releases it. */
public final class App {
    public static void main(String[] args) throws Exception {
        Path db = Path.of(args.length > 0 ? args[0] : "locks.db").toAbsolutePath();
        SQLiteDataSource dataSource = new SQLiteDataSource();
        dataSource.setUrl("jdbc:sqlite:" + db);
        try (Turnstile turnstile = Turnstile.builder(JdbcLockStore.builder(dataSource).createTableIfMissing(true).build()).build()) {
            run(turnstile);
        }
    }

    private static void run(Turnstile turnstile) {
        LockOptions options = LockOptions.builder().lockAtMostFor(Duration.ofMinutes(1)).build();
        Optional<Lease> acquired = turnstile.tryAcquire("release-check", options);
        if (acquired.isEmpty()) {
            throw new IllegalStateException("the lock was busy on a fresh store");
        }
        try (Lease lease = acquired.get()) {
            System.out.println("acquired release-check, fence " + lease.fence());
            if (turnstile.tryAcquire("release-check", options).isPresent()) {
                throw new IllegalStateException("a second acquire got the held lock");
            }
        }
        if (turnstile.tryAcquire("release-check", options).map(l -> { l.close(); return l; }).isEmpty()) {
            throw new IllegalStateException("the lock was not free after the release");
        }
        System.out.println("released release-check");
    }
}
