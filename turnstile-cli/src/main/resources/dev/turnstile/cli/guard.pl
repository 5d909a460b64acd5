# turnstile-guard: runs `turnstile run`'s command and makes sure it never outlives the lease, even
# when the turnstile JVM is killed (SIGKILL, the OOM killer) or frozen (SIGSTOP, a stalled VM).
#
# It is a separate process so that it keeps working when the JVM does not, and it is written for
# perl-base (Essential on Debian and Ubuntu, shipped with macOS) so that it needs nothing a bare
# machine lacks. The JVM starts it through Guard.java: perl -e <this> SOCKET GRACE_MS -- CMD ARGS...
#
# The guard connects to the JVM's Unix socket, starts the command in a process group of its own
# (in a session of the guard's own, so that signals to turnstile's job do not reach either),
# and then stops that group (SIGTERM, SIGKILL when the grace period or the lease runs out):
#   - at (lease deadline - grace) if no later deadline has come from the JVM by then (frozen JVM,
#     renewals failing), SIGKILL at the deadline itself;
#   - at once when the socket closes (the JVM died), SIGKILL after the grace period or at the
#     deadline, whichever comes first;
#   - when the JVM says so (stop SIG: a signal to turnstile; kill: the store says the lease is gone).
# Other signals to turnstile reach the command alone (signal SIG).
# When the command ends, what is left of its group is stopped the same way, so that nothing it
# started runs on without the lock. Then the guard tells the JVM the exit code and exits with it.
#
# From the JVM (one line each):  deadline MS_LEFT | stop SIGNAME | kill | signal SIGNAME
# To the JVM:                    pid PID | exit CODE
use strict;
use warnings;
use POSIX ();
use Socket qw(PF_UNIX SOCK_STREAM pack_sockaddr_un);

my ($socket_path, $grace_ms, $dashes, @command) = @ARGV;
die "turnstile-guard: usage: SOCKET GRACE_MS -- CMD [ARGS...]\n"
    unless defined $dashes && $dashes eq '--' && @command && $grace_ms =~ /^\d+$/;
$0 = 'turnstile-guard';
my $grace = $grace_ms / 1000;

# Monotonic seconds. Time::HiRes is not in perl-base; times() is (10 ms ticks, which is plenty:
# the lease's drift margin is at least 2 ms + 1% of the TTL and its timer margin 100 ms).
my $ticks = POSIX::sysconf(POSIX::_SC_CLK_TCK()) || 100;
my $hires = eval { require Time::HiRes; Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC()); 1 };
sub now { $hires ? Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC()) : (POSIX::times())[0] / $ticks }

# Signals that would stop the guard are ignored: only the JVM (or SIGKILL) ends it. The command
# gets back the dispositions the guard inherited.
my @ignored = qw(INT TERM HUP QUIT PIPE USR1 USR2 ALRM TSTP TTIN TTOU);
my %inherited = map { $_ => ($SIG{$_} // 'DEFAULT') } @ignored;
$SIG{$_} = 'IGNORE' for @ignored;
# The command's end wakes the main loop through a pipe (a signal that came just before select()
# would not interrupt it).
pipe(my $ended_in, my $ended_out) or die "turnstile-guard: pipe: $!\n";
$ended_out->blocking(0);
$SIG{CHLD} = sub { syswrite($ended_out, 'x') };
POSIX::setsid();

my $connected = 0;
socket(my $jvm, PF_UNIX, SOCK_STREAM, 0) or die "turnstile-guard: socket: $!\n";
connect($jvm, pack_sockaddr_un($socket_path)) or die "turnstile-guard: cannot reach turnstile at $socket_path: $!\n";
$connected = 1;
sub tell_jvm { my $line = shift; syswrite($jvm, "$line\n") if $connected; }

my $deadline;            # monotonic time at which the lease can no longer be proven held
my $input = '';
my ($pid, $stopping, $kill_at, $killing_since);

# Lines from the JVM; 'gone' when it has closed the socket (it exited or was killed).
sub read_jvm {
    my $n = sysread($jvm, my $chunk, 4096);
    return () if !defined $n && $!{EINTR};
    if (!$n) {
        $connected = 0;
        return ('gone');
    }
    $input .= $chunk;
    my @lines;
    push @lines, $1 while $input =~ s/^([^\n]*)\n//;
    return @lines;
}

# Waits up to $timeout s for the JVM to say something or the command to end; true if the JVM has.
sub wait_readable {
    my $timeout = shift;
    my $rin = '';
    vec($rin, fileno($jvm), 1) = 1 if $connected;
    vec($rin, fileno($ended_in), 1) = 1;
    my $ready = select(my $rout = $rin, undef, undef, $timeout);
    return 0 unless $ready && $ready > 0;
    sysread($ended_in, my $drain, 64) if vec($rout, fileno($ended_in), 1);
    return $connected && vec($rout, fileno($jvm), 1);
}

# The command must not start unguarded: wait for the lease's deadline first. Anything else the
# JVM sends meanwhile is handled once the command runs.
my @pending;
my $waited = 0;
while (!defined $deadline) {
    exit 70 if $waited++ > 300;   # 30 s without word from the JVM
    next unless wait_readable(0.1);
    for my $line (read_jvm()) {
        exit 70 if $line eq 'gone';
        if (!defined $deadline && $line =~ /^deadline (\d+)$/) {
            $deadline = now() + $1 / 1000;
        } else {
            push @pending, $line;
        }
    }
}

# Start the command in its own process group. The exec's error, if any, comes back through a
# close-on-exec pipe (perl marks descriptors above $^F close-on-exec).
pipe(my $exec_error_in, my $exec_error_out) or die "turnstile-guard: pipe: $!\n";
$pid = fork();
die "turnstile-guard: fork: $!\n" unless defined $pid;
if ($pid == 0) {
    close $exec_error_in;
    close $jvm;
    setpgrp(0, 0);
    $SIG{$_} = $inherited{$_} for @ignored;
    $SIG{CHLD} = 'DEFAULT';
    delete $ENV{$_} for split /,/, (delete $ENV{TURNSTILE_GUARD_UNSET} // '');
    no warnings 'exec';    # its failure is reported below
    exec { $command[0] } @command;
    syswrite($exec_error_out, pack('N', $! + 0));
    POSIX::_exit(127);
}
setpgrp($pid, $pid);     # from this side too, so that no signal below can miss the group
close $exec_error_out;
my ($got, $errno_bytes);
1 until defined($got = sysread($exec_error_in, $errno_bytes, 4)) || !$!{EINTR};
close $exec_error_in;
if ($got && $got == 4) {
    local $! = unpack('N', $errno_bytes);
    my $why = "$!";
    my $code = 126;
    if ($! == POSIX::ENOENT()) {
        # ENOENT for a file that exists means its #! interpreter is missing, as the shell says.
        ($code, $why) = resolves($command[0])
            ? (126, 'bad interpreter (the #! line names a program that does not exist)')
            : (127, 'command not found');
    }
    waitpid($pid, 0);
    print STDERR "turnstile: cannot run '$command[0]': $why\n";
    tell_jvm("exit $code");
    exit $code;
}
tell_jvm("pid $pid");

sub resolves {
    my $name = shift;
    return -e $name if $name =~ m{/};
    return scalar grep { -f "$_/$name" } split /:/, ($ENV{PATH} // '/usr/bin:/bin');
}

# What the command started and that left its group (a nested session), found through /proc
# where there is one; the group itself is signalled as a whole.
sub descendants {
    my %children;
    for my $stat (glob '/proc/[0-9]*/stat') {
        open(my $fh, '<', $stat) or next;
        my $line = <$fh> // next;
        push @{ $children{$2} }, $1 if $line =~ /^(\d+) \(.*\) \S+ (\d+)/s;
    }
    my (@found, @todo);
    @todo = ($pid);
    while (@todo) {
        for my $child (@{ $children{ shift @todo } // [] }) {
            push @found, $child;
            push @todo, $child;
        }
    }
    return @found;
}

sub signal_all {
    my $sig = shift;
    my @below = descendants();
    kill $sig, -$pid;
    kill $sig, @below if @below;
}

# Starts stopping the command: SIG to the whole tree now, SIGKILL at min(now + grace, deadline).
# The reasons only the guard knows it says itself: the JVM may be dead or frozen.
sub stop {
    my ($sig, $reason) = @_;
    return if $stopping;
    $stopping = 1;
    my $at = now() + ($sig eq 'KILL' ? 0 : $grace);
    $kill_at = $deadline < $at ? $deadline : $at;
    print STDERR "turnstile: stopping the command: $reason\n" if defined $reason;
    signal_all($sig);
}

sub handle {
    my $line = shift;
    if ($line eq 'gone') {
        stop('TERM', 'the turnstile process is gone');
    } elsif ($line =~ /^deadline (\d+)$/) {
        $deadline = now() + $1 / 1000;
    } elsif ($line =~ /^stop ([A-Z0-9]+)$/) {
        stop($1);
    } elsif ($line eq 'kill') {
        stop('KILL');
    } elsif ($line =~ /^signal ([A-Z0-9]+)$/) {
        kill $1, $pid;   # to the command alone, as `kill -SIG` to it would: its helpers may not expect it
    }
}

handle($_) for @pending;
my $status;
while (1) {
    if (!defined $status && waitpid($pid, POSIX::WNOHANG()) == $pid) {
        $status = $?;
    }
    last if defined $status && !kill(0, -$pid);
    my $now = now();
    if (defined $stopping) {
        if ($now >= $kill_at) {
            signal_all('KILL');
            $killing_since //= $now;
            # SIGKILL cannot be caught; what still shows after 2 s is a zombie waiting for its parent.
            last if defined $status && $now - $killing_since > 2;
            $kill_at = $now + 0.05;
        }
    } elsif (defined $status) {
        stop('TERM', 'the command ended, but processes it started still run');
    } elsif ($now >= $deadline - $grace) {
        stop('TERM', 'the lease could not be renewed in time (turnstile frozen, or the store unreachable)');
    }
    my $timeout = (defined $stopping ? $kill_at : $deadline - $grace) - now();
    $timeout = 0.2 if $timeout > 0.2;   # also polls what is left of the group
    $timeout = 0 if $timeout < 0;
    handle($_) for wait_readable($timeout) ? read_jvm() : ();
}

my $code = POSIX::WIFEXITED($status) ? POSIX::WEXITSTATUS($status)
         : POSIX::WIFSIGNALED($status) ? 128 + POSIX::WTERMSIG($status) : 70;
tell_jvm("exit $code");
exit $code;
