package dev.turnstile.cli;

/** The exit codes of {@code turnstile}, from {@code sysexits.h} where one fits. */
final class ExitCodes {
    /** The command ran and exited 0, or a subcommand succeeded. */
    static final int OK = 0;
    /** {@code release --force}: the lock was not held. */
    static final int NOT_HELD = 1;
    /** EX_USAGE: bad arguments, bad store URL, bad lock name or duration. */
    static final int USAGE = 64;
    /** EX_UNAVAILABLE: the store cannot be reached, refuses the credentials or lacks the table. */
    static final int UNAVAILABLE = 69;
    /** EX_SOFTWARE: the lease was lost while the command ran, so the command was stopped. */
    static final int LEASE_LOST = 70;
    /** EX_OSERR: the guard that stops the command if turnstile dies could not start; nothing ran. */
    static final int GUARD_UNAVAILABLE = 71;
    /** EX_IOERR: {@code locks} or {@code schema} could not write their output (closed, or a full disk). */
    static final int OUTPUT_FAILED = 74;
    /** EX_TEMPFAIL: the lock was busy (default of {@code --busy-exit}). */
    static final int BUSY = 75;

    private ExitCodes() {}
}
