package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RunCommandTest {
    static final String PG = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";

    @TempDir Path dir;
    Cli cli;
    LockStore store;
    Turnstile library;

    @BeforeEach
    void setUp() {
        cli = new Cli(dir);
    }

    @AfterEach
    void tearDown() {
        if (library != null) {
            library.close();
        }
        if (store != null) {
            store.close();
        }
    }

    /** The same embedded store the CLI uses, through the library (another process, in effect). */
    Turnstile library() throws Exception {
        if (library == null) {
            Files.createDirectories(cli.embeddedDb().getParent());
            store = LockStores.open(cli.embeddedUrl());
            library = Turnstile.builder(store).owner("test-holder").build();
        }
        return library;
    }

    static String name() {
        return "job-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void runsTheCommandWithTheLeaseInItsEnvironmentAndReturnsItsExitCode() throws Exception {
        Path out = dir.resolve("env.txt");
        String lock = name();
        Cli.Result r = cli.run("run", "--lock", lock, "--",
                "sh", "-c", "echo \"$TURNSTILE_LOCK $TURNSTILE_FENCE ${#TURNSTILE_TOKEN}\" > '" + out + "'; exit 3");
        assertThat(r.code()).as(r.all()).isEqualTo(3);
        assertThat(Files.readString(out).trim()).isEqualTo(lock + " 1 22");
        assertThat(cli.run("run", "--lock", lock, "--", "true").code()).isZero();
        assertThat(cli.run("run", "--lock", lock, "--", "sh", "-c", "test $TURNSTILE_FENCE = 3").code())
                .as("fences keep rising").isZero();
    }

    @Test
    void aBusyLockExits75OrTheChosenCodeAndNamesTheHolder() throws Exception {
        String lock = name();
        Lease held = library().tryAcquire(lock, LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow();
        Cli.Result busy = cli.run("run", "--lock", lock, "--", "sh", "-c", "exit 9");
        assertThat(busy.code()).isEqualTo(75);
        assertThat(busy.err()).contains("busy").contains("test-holder").contains("fence " + held.fence());
        assertThat(cli.run("run", "--lock", lock, "--busy-exit", "0", "--", "sh", "-c", "exit 9").code()).isZero();
        held.release();
        assertThat(cli.run("run", "--lock", lock, "--", "sh", "-c", "exit 9").code()).isEqualTo(9);
    }

    @Test
    void waitTakesTheLockWhenTheHolderReleasesIt() throws Exception {
        String lock = name();
        Lease held = library().tryAcquire(lock, LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow();
        CompletableFuture.runAsync(() -> {
            sleep(700);
            held.release();
        });
        long start = System.nanoTime();
        assertThat(cli.run("run", "--lock", lock, "--wait", "20s", "--", "true").code()).isZero();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(Duration.ofMillis(500));
    }

    @Test
    void atLeastKeepsTheLockAfterAFastCommand() {
        String lock = name();
        assertThat(cli.run("run", "--lock", lock, "--at-least", "3s", "--", "true").code()).isZero();
        assertThat(cli.run("run", "--lock", lock, "--", "true").code()).isEqualTo(75);
    }

    @Test
    void aLostLeaseStopsTheCommandAndExits70() throws Exception {
        String lock = name();
        Path marker = dir.resolve("still-running");
        CompletableFuture<Cli.Result> running = CompletableFuture.supplyAsync(() -> cli.run("run", "--lock", lock,
                "--ttl", "1500ms", "--grace", "500ms", "--", "sh", "-c", "while true; do touch '" + marker + "'; sleep 0.1; done"));
        Turnstile thief = library();
        await().atMost(Duration.ofSeconds(20)).until(() -> Files.exists(marker));
        assertThat(thief.forceRelease(lock)).isTrue();
        Lease stolen = thief.tryAcquire(lock, LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow();
        Cli.Result r = running.get(10, TimeUnit.SECONDS);
        assertThat(r.code()).as(r.all()).isEqualTo(70);
        assertThat(r.err()).contains("lost");
        Files.deleteIfExists(marker);
        sleep(400);
        assertThat(marker).as("the command was stopped").doesNotExist();
        assertThat(stolen.isHeld()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "run --lock x true",
        "run --lock x --",
        "run -- true",
        "run --lock x --bogus -- true",
        "run --lock x --ttl 0s -- true",
        "run --lock x --ttl 5q -- true",
        "run --lock x --ttl 999d -- true",
        "run --lock x --ttl 1s --at-least 2s -- true",
        "run --lock x --wait soon -- true",
        "run --lock x --busy-exit 300 -- true",
        "run --lock x --store foo://bar -- true",
        "run --lock x --store jdbc:oracle:thin:@h:1521:x -- true",
        "run --lock x --store jdbc:postgresql://h/db?turnstile.bogus=1 -- true",
        "run --lock x --store jdbc:postgresql://h/db?turnstile.table=a;drop -- true",
        "run --lock | -- true",
        "release x",
        "release",
        "schema --store mongodb://h",
        "frobnicate",
        ""
    })
    void badInputExits64WithAMessageAndCreatesNothing(String line) {
        String[] args = line.isEmpty() ? new String[0] : line.replace("|", "").split(" ", -1);
        if (line.contains("|")) {
            args[2] = "";
        }
        Cli.Result r = cli.run(args);
        assertThat(r.code()).as(r.all()).isEqualTo(64);
        assertThat(r.err()).startsWith("turnstile: ").hasSizeGreaterThan(20);
        assertThat(cli.embeddedDb()).as("bad input changes nothing").doesNotExist();
    }

    @Test
    void controlCharactersAndSpacesInNamesAreRejected() {
        assertThat(cli.run("run", "--lock", "a\nb", "--", "true").err()).contains("control character");
        assertThat(cli.run("run", "--lock", " a", "--", "true").err()).contains("white space");
        assertThat(cli.run("run", "--lock", "x".repeat(300), "--", "true").err()).contains("255");
        assertThat(cli.embeddedDb()).doesNotExist();
    }

    @Test
    void anUnreachableStoreExits69AndNeverPrintsThePassword() {
        Cli.Result r = cli.run("run", "--lock", "x", "--store",
                "jdbc:postgresql://127.0.0.1:1/test?user=u&password=hunter2secret", "--", "true");
        assertThat(r.code()).isEqualTo(69);
        assertThat(r.all()).contains("unavailable").doesNotContain("hunter2secret");
    }

    @Test
    void wrongCredentialsExit69WithoutThePassword() {
        Cli.Result viaParam = cli.run("locks", "--store", "jdbc:mariadb://127.0.0.1:3306/test?user=root&password=s3cretXYZ");
        assertThat(viaParam.code()).as(viaParam.all()).isEqualTo(69);
        assertThat(viaParam.all()).doesNotContain("s3cretXYZ").containsIgnoringCase("denied");
        Cli.Result viaUserInfo = cli.run("locks", "--store", "jdbc:mysql://root:s3cretXYZ@127.0.0.1:3306/test");
        assertThat(viaUserInfo.code()).as(viaUserInfo.all()).isEqualTo(69);
        assertThat(viaUserInfo.all()).doesNotContain("s3cretXYZ");
    }

    @Test
    void aMissingTablePointsAtTurnstileSchema() {
        String table = "no_such_table_" + UUID.randomUUID().toString().substring(0, 6);
        Cli.Result r = cli.run("run", "--lock", "x", "--store", PG + "&turnstile.table=" + table, "--", "true");
        assertThat(r.code()).isEqualTo(69);
        assertThat(r.err()).contains(table).contains("turnstile schema");
    }

    @Test
    void schemaPrintsTheDdlAndApplyCreatesTheTable() {
        String table = "cli_schema_" + UUID.randomUUID().toString().substring(0, 6);
        String url = PG + "&turnstile.table=" + table;
        Cli.Result printed = cli.run("schema", "--store", url);
        assertThat(printed.code()).isZero();
        assertThat(printed.out()).contains("CREATE TABLE IF NOT EXISTS " + table).contains("fence");
        assertThat(cli.run("run", "--lock", "x", "--store", url, "--", "true").code()).as("not applied yet").isEqualTo(69);
        assertThat(cli.run("schema", "--store", url, "--apply").code()).isZero();
        assertThat(cli.run("run", "--lock", "x", "--store", url, "--", "true").code()).isZero();
        assertThat(cli.run("schema").out()).as("embedded default").contains("INTEGER");
    }

    @Test
    void commandNotFoundExits127AndNotExecutable126() throws Exception {
        Cli.Result notFound = cli.run("run", "--lock", name(), "--", "/no/such/command");
        assertThat(notFound.code()).isEqualTo(127);
        assertThat(cli.run("run", "--lock", name(), "--", "no-such-command-on-path").code()).isEqualTo(127);
        Path script = Files.writeString(dir.resolve("script.sh"), "#!/bin/sh\necho hi\n");
        assertThat(cli.run("run", "--lock", name(), "--", script.toString()).code()).as("not executable").isEqualTo(126);
        Path orphan = Files.writeString(dir.resolve("orphan.sh"), "#!/no/such/interpreter\necho hi\n");
        assertThat(orphan.toFile().setExecutable(true)).isTrue();
        assertThat(cli.run("run", "--lock", name(), "--", orphan.toString()).code()).as("bad interpreter").isEqualTo(126);
    }

    @Test
    void aGraceThatDoesNotFitInTheLeaseIsRefusedAndTheDefaultShortened() {
        String lock = name();
        Cli.Result tooLong = cli.run("run", "--lock", lock, "--ttl", "3s", "--grace", "2s", "--", "true");
        assertThat(tooLong.code()).isEqualTo(64);
        assertThat(tooLong.err()).contains("--grace 2s does not fit in --ttl 3s").contains("at most half the TTL (1s500ms)");
        assertThat(cli.run("locks").out()).as("nothing taken").doesNotContain(lock);
        assertThat(cli.run("run", "--lock", lock, "--ttl", "3s", "--grace", "1s500ms", "--", "true").code()).as("the limit as the message writes it").isZero();
        assertThat(cli.run("run", "--lock", lock, "--ttl", "2s", "--", "true").code()).as("default 10s shortened to 1s").isZero();
    }

    @Test
    void locksListsHoldersAndReleaseForceFreesThem() throws Exception {
        String lock = "list-" + name();
        Lease held = library().tryAcquire(lock, LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow();
        Cli.Result table = cli.run("locks");
        assertThat(table.code()).isZero();
        assertThat(table.out()).contains("NAME").contains(lock).contains("test-holder");
        Cli.Result json = cli.run("locks", "--json");
        assertThat(json.out()).contains("\"name\":\"" + lock + "\"").contains("\"fence\":" + held.fence());
        assertThat(cli.run("release", lock).code()).as("without --force").isEqualTo(64);
        assertThat(cli.run("release", "--force", lock).code()).isZero();
        assertThat(cli.run("release", "--force", lock).code()).as("not held any more").isEqualTo(1);
        assertThat(cli.run("locks").out()).doesNotContain(lock);
        assertThat(cli.run("run", "--lock", lock, "--", "true").code()).isZero();
    }

    @Test
    void everySubcommandHasHelp() {
        for (String sub : new String[] {"run", "locks", "release", "schema"}) {
            Cli.Result r = cli.run(sub, "--help");
            assertThat(r.code()).isZero();
            assertThat(r.out()).contains("Usage: turnstile " + sub);
        }
        assertThat(cli.run("--help").out()).contains("Exit codes").contains("75");
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void theGraceFitsInHalfOfTheStoresSessionBoundAndOnlyWhereThereIsOne() {
        // A ZooKeeper session of 6 s: the store vouches for a lease 5.4 s after its last answer.
        Optional<Duration> session = Optional.of(Duration.ofMillis(5400));
        assertThat(RunCommand.graceFit(session, Duration.ofSeconds(5), true)).as("explicit, refused").isNull();
        assertThat(RunCommand.graceFit(session, Duration.ofSeconds(10), false)).as("default, shortened")
                .isEqualTo(Duration.ofMillis(2700));
        assertThat(RunCommand.graceFit(session, Duration.ofSeconds(2), true)).isEqualTo(Duration.ofSeconds(2));
        // A store whose leases end only by their TTL: the TTL/2 rule alone, however long the acquire
        // took (a guess from the time left refused --grace 1s on Redis under load in the CLI chaos run).
        assertThat(RunCommand.graceFit(Optional.empty(), Duration.ofMillis(1500), true)).isEqualTo(Duration.ofMillis(1500));
    }
}
