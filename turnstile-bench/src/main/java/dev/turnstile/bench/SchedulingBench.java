package dev.turnstile.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.ReleaseOutcome;
import dev.turnstile.Turnstile;
import dev.turnstile.jdbc.JdbcLockStore;
import dev.turnstile.job.JobRunner;
import dev.turnstile.redis.RedisLockStore;
import dev.turnstile.shedlock.TurnstileLockProvider;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spring.TurnstileAutoConfiguration;
import dev.turnstile.spring.TurnstileLock;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * What a locked run of a scheduled job costs over the lock itself: one run of an empty job, on one
 * thread (a scheduler's tick), through every path a user has, side by side with ShedLock 7.10.1's
 * own, on PostgreSQL and on Redis. Each slice of a path is paired with a slice of the bare
 * {@code Turnstile.tryAcquire} + {@code release} cycle beside it (the reference the scheduling
 * paths are judged against), in shuffled order, as the other benchmarks pair with their floor.
 *
 * <p>The paths: {@code JOB_RUNNER} ({@link JobRunner#run}), {@code TURNSTILE_ANNOTATION} (a Spring
 * bean's {@link TurnstileLock} method through the starter's proxy), {@code SHEDLOCK_BRIDGE}
 * (ShedLock's {@code DefaultLockingTaskExecutor} over {@link TurnstileLockProvider}, what a
 * ShedLock user who switched keeps running), {@code SHEDLOCK} (the same executor over ShedLock's
 * own provider) and {@code SHEDLOCK_ANNOTATION} ({@code @SchedulerLock} through ShedLock's Spring
 * proxy, {@code PROXY_METHOD}). The raw store cycle ({@code FLOOR}) is shown too.
 */
public final class SchedulingBench {
    private static final Duration AT_MOST = Duration.ofSeconds(30);

    private SchedulingBench() {}

    /** The Spring side: the starter's auto-configuration and ShedLock's, one bean of jobs each. */
    @Configuration(proxyBeanMethods = false)
    @Import(TurnstileAutoConfiguration.class)
    @EnableSchedulerLock(defaultLockAtMostFor = "30s")
    static class SpringSide {}

    /** A job under {@link TurnstileLock}. Its count is read through a method: the proxy's own fields are not the bean's. */
    public static class TurnstileJobs {
        private final AtomicLong runs = new AtomicLong();

        /** @return how many times the job ran */
        public long runs() {
            return runs.get();
        }

        /** The empty job. */
        @TurnstileLock(name = "bench-sched-annotated", lockAtMostFor = "30s")
        public void job() {
            runs.incrementAndGet();
        }
    }

    /** A job under ShedLock's {@code @SchedulerLock}. */
    public static class ShedLockJobs {
        private final AtomicLong runs = new AtomicLong();

        /** @return how many times the job ran */
        public long runs() {
            return runs.get();
        }

        /** The empty job. */
        @SchedulerLock(name = "bench-sched-shedlock-annotated", lockAtMostFor = "30s")
        public void job() {
            runs.incrementAndGet();
        }
    }

    /**
     * Runs the benchmark and appends its table to the report.
     *
     * @param args ignored; use {@code -Dbench.*} system properties
     * @throws Exception if a store cannot be reached or set up
     */
    public static void main(String[] args) throws Exception {
        Logging.quiet();
        int slices = BenchConfig.slices();
        long sliceNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.sliceMillis());
        long warmupNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.warmupMillis());
        Random shuffle = new Random(BenchConfig.seed());
        Report report = AcquireReleaseBench.newReport("store");

        BenchDatabase pg = BenchDatabase.POSTGRESQL;
        try (HikariDataSource pool = pg.openPool(10, "bench-scheduling"); SliceRunner runner = new SliceRunner(1)) {
            pg.prepare(pool);
            try {
                measure(report, "postgresql", runner, new FloorContender(pool, pg), JdbcLockStore.builder(pool).build(),
                        new JdbcTemplateLockProvider(pool, BenchDatabase.SHEDLOCK_TABLE), null, slices, warmupNanos, sliceNanos, shuffle);
            } finally {
                pg.deleteBenchRows(pool);
            }
        }
        System.err.printf("redis: %d stale bench keys removed%n", BenchRedis.deleteBenchKeys());
        RedisClient lettuce = BenchRedis.lettuce();
        LettuceConnectionFactory springFactory = BenchRedis.springFactory();
        try (SliceRunner runner = new SliceRunner(1)) {
            measure(report, "redis", runner, new RedisFloorContender(lettuce), RedisLockStore.builder(lettuce).build(),
                    new RedisLockProvider.Builder(springFactory).keyPrefix("bench").environment("shedlock-sched").build(),
                    new RedisLockProvider.Builder(springFactory).keyPrefix("bench").environment("shedlock-sched-safe")
                            .safeUpdate(true).build(),
                    slices, warmupNanos, sliceNanos, shuffle);
        } finally {
            springFactory.destroy();
            lettuce.shutdown();
            BenchRedis.deleteBenchKeys();
        }
        report.emit("Scheduling: one locked run of an empty job, 1 thread", String.format(
                "%d slices of %d ms per path, each beside a slice of the bare Turnstile tryAcquire + release "
                        + "(TURNSTILE; pairs in shuffled order, alternating which goes first); warm-up %d ms per path. "
                        + "Latency is one run of the empty job, lock taken and freed. Ratios are per slice against the "
                        + "TURNSTILE slice beside it: median [min–max]. Every path uses the same store, pool or client; "
                        + "ShedLock 7.10.1 uses its JdbcTemplate provider on PostgreSQL and its Spring Data Redis "
                        + "provider (Lettuce 7.5.2) on Redis, whose unlock is a plain DEL (not owner-checked) unless "
                        + "safeUpdate(true) (SHEDLOCK_SAFE, an owner-checked script); lockAtMostFor 30 s, lockAtLeastFor 0 everywhere.",
                slices, BenchConfig.sliceMillis(), BenchConfig.warmupMillis()));
    }

    private static void measure(Report report, String store, SliceRunner runner, Contender floor, LockStore lockStore,
            LockProvider shedLockOwn, LockProvider shedLockSafe, int slices, long warmupNanos, long sliceNanos, Random shuffle)
            throws Exception {
        try (AnnotationConfigApplicationContext spring = new AnnotationConfigApplicationContext()) {
            spring.registerBean(LockStore.class, () -> lockStore);
            spring.registerBean(LockProvider.class, () -> shedLockOwn);
            spring.registerBean(TurnstileJobs.class);
            spring.registerBean(ShedLockJobs.class);
            spring.register(SpringSide.class);
            spring.refresh();
            Turnstile turnstile = spring.getBean(Turnstile.class);
            JobRunner jobs = spring.getBean(JobRunner.class);
            TurnstileJobs turnstileJobs = spring.getBean(TurnstileJobs.class);
            ShedLockJobs shedLockJobs = spring.getBean(ShedLockJobs.class);
            LockingTaskExecutor bridge = new DefaultLockingTaskExecutor(new TurnstileLockProvider(turnstile));
            LockingTaskExecutor shedLock = new DefaultLockingTaskExecutor(shedLockOwn);
            LockOptions options = LockOptions.lockAtMostFor(AT_MOST);
            AtomicLong executed = new AtomicLong();

            Contender bare = new OneCall("TURNSTILE", name -> {
                Optional<Lease> lease = turnstile.tryAcquire(name, options);
                return lease.isPresent() && lease.get().release() == ReleaseOutcome.RELEASED;
            });
            List<Contender> contenders = new ArrayList<>(List.of(bare, floor,
                    new OneCall("JOB_RUNNER", name -> jobs.run(name, () -> { }).ran()),
                    new OneCall("TURNSTILE_ANNOTATION", name -> ran(turnstileJobs::runs, turnstileJobs::job)),
                    new OneCall("SHEDLOCK_BRIDGE", name -> executed(bridge, executed, name)),
                    new OneCall("SHEDLOCK", name -> executed(shedLock, executed, name)),
                    new OneCall("SHEDLOCK_ANNOTATION", name -> ran(shedLockJobs::runs, shedLockJobs::job))));
            if (shedLockSafe != null) {
                // Redis: ShedLock's provider unlocks with a plain DEL unless safeUpdate(true), owner-checked as Turnstile is
                LockingTaskExecutor safe = new DefaultLockingTaskExecutor(shedLockSafe);
                contenders.add(new OneCall("SHEDLOCK_SAFE", name -> executed(safe, executed, name)));
            }
            SliceRunner.Paired<Contender, SliceResult> results = AcquireReleaseBench.measure(runner, contenders, 1, slices,
                    warmupNanos, sliceNanos, shuffle);
            System.err.printf("%s scheduling: %d slices done%n", store, slices);
            AcquireReleaseBench.addRows(report, store, 1, results, bare);
        } finally {
            floor.close();
            lockStore.close();
        }
    }

    private static boolean ran(java.util.function.LongSupplier runs, Runnable job) {
        long before = runs.getAsLong();
        job.run();
        return runs.getAsLong() == before + 1;
    }

    private static boolean executed(LockingTaskExecutor executor, AtomicLong executed, String name) {
        long before = executed.get();
        executor.executeWithLock((Runnable) executed::incrementAndGet,
                new LockConfiguration(ClockProvider.now(), name, AT_MOST, Duration.ZERO));
        return executed.get() == before + 1;
    }
}
