# turnstile-guard: runs `turnstile run`'s command and makes sure it never outlives the lease, even
# when the turnstile JVM is killed (SIGKILL, the OOM killer) or frozen (SIGSTOP, a stalled VM).
#
# It is a separate process so that it keeps working when the JVM does not, and it is written for
# perl-base (Essential on Debian and Ubuntu, shipped with macOS) so that it needs nothing a bare
# machine lacks. The JVM starts it through Guard.java: perl -e <this> SOCKET GRACE_MS -- CMD ARGS...
#
# The guard connects to the JVM's Unix socket and waits to be told to start the command, with the
# lease's deadline; it refuses (and runs nothing) when that deadline leaves no more than the grace
# period, or when told to stop or kill first. It starts the command in a process group of its own
# (in a session of the guard's own, so that signals to turnstile's job do not reach either), and
# then stops the command and everything it started (SIGTERM, SIGKILL when the grace period or the
# lease runs out):
#   - at (lease deadline - grace) if no later deadline has come from the JVM by then (frozen JVM,
#     renewals failing), SIGKILL at the deadline itself;
#   - at once when the socket closes (the JVM died), SIGKILL after the grace period or at the
#     deadline, whichever comes first;
#   - when the JVM says so (stop SIG: a signal to turnstile; kill: the store says the lease is gone).
# Other signals to turnstile reach the command alone (signal SIG).
# When the command ends, what is left of what it started is stopped the same way, so that nothing
# runs on without the lock. Then the guard tells the JVM the exit code and exits with it.
#
# What the command started: on Linux (x86_64, aarch64) the guard is a child subreaper
# (prctl PR_SET_CHILD_SUBREAPER), so every descendant, also one that left the group with setsid
# and whose parent has exited, stays its descendant: it is found through /proc from the guard's own
# pid, reaped here, and the guard exits only when none is left. Elsewhere it is the command's group
# plus what /proc shows below the command (a descendant whose parent chain broke is not found).
#
# Deadlines: on Linux the JVM (whose System.nanoTime is CLOCK_MONOTONIC) sends the deadline as an
# absolute CLOCK_MONOTONIC time in ns, which the guard reads through Time::HiRes when present (it
# is not in perl-base) or the clock_gettime system call. The guard reports its clock reading when
# it connects and the JVM uses absolute deadlines only if that reading lies between its own before
# and after; otherwise (other systems) deadlines are relative ("in MS"), counted from when the
# guard reads them on its own monotonic clock, so that a pause of the JVM between computing one and
# sending it stretches it by that pause.
#
# From the JVM (one line each):  start at NS | start in MS | deadline at NS | deadline in MS |
#                                stop SIGNAME | kill | signal SIGNAME
# To the JVM:   hello CLOCK_NS|none SUBREAPER(0|1) | pid PID | refused REASON | ack | exit CODE
# Every line from the JVM is answered with "ack" once it was acted on, so that the JVM can tell a
# frozen guard and act itself.
use strict;
use warnings;
use POSIX ();
use Socket qw(PF_UNIX SOCK_STREAM pack_sockaddr_un);

my ($socket_path, $grace_ms, $dashes, @command) = @ARGV;
die "turnstile-guard: usage: SOCKET GRACE_MS -- CMD [ARGS...]\n"
    unless defined $dashes && $dashes eq '--' && @command && $grace_ms =~ /^\d+$/;
$0 = 'turnstile-guard';
my $grace = $grace_ms / 1000;

# TURNSTILE_GUARD_CLOCK (tests, diagnosis): 'syscall' skips Time::HiRes, 'relative' uses no
# monotonic clock shared with the JVM. The command does not get it.
my $clock_choice = delete $ENV{TURNSTILE_GUARD_CLOCK} // '';
my $arch = (POSIX::uname())[4] // '';
my $native64 = $^O eq 'linux' && length(pack('p', 'x')) == 8;   # not an x32 or 32-bit perl
my %clock_gettime_nr = (x86_64 => 228, aarch64 => 113);
my %prctl_nr = (x86_64 => 157, aarch64 => 167);

# CLOCK_MONOTONIC in ns (an integer), or undef if this perl cannot read it.
my $mono_ns;
if ($clock_choice ne 'relative' && $clock_choice ne 'syscall'
        && eval { require Time::HiRes; defined Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC()) }) {
    $mono_ns = sub { int(Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC()) * 1e9) };
} elsif ($clock_choice ne 'relative' && $native64 && exists $clock_gettime_nr{$arch}) {
    my $nr = $clock_gettime_nr{$arch};
    my $read = sub {
        my $timespec = "\0" x 16;
        return undef unless syscall($nr, 1, $timespec) == 0;    # CLOCK_MONOTONIC = 1
        my ($s, $ns) = unpack('q q', $timespec);
        return $s * 1_000_000_000 + $ns;
    };
    $mono_ns = $read if eval { defined $read->() };
}

# Monotonic seconds. Without CLOCK_MONOTONIC, times() (perl-base; 10 ms ticks, which is plenty:
# the lease's drift margin is at least 2 ms + 1% of the TTL and its timer margin 100 ms).
my $ticks = POSIX::sysconf(POSIX::_SC_CLK_TCK()) || 100;
sub now { $mono_ns ? $mono_ns->() / 1e9 : (POSIX::times())[0] / $ticks }

# A child subreaper: orphans among the command's descendants become the guard's children.
my $subreaper = 0;
if ($native64 && exists $prctl_nr{$arch}) {
    $subreaper = (syscall($prctl_nr{$arch}, 36, 1, 0, 0, 0) == 0) ? 1 : 0;   # PR_SET_CHILD_SUBREAPER
}

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
tell_jvm('hello ' . ($mono_ns ? $mono_ns->() : 'none') . " $subreaper");

my $deadline;            # monotonic time (s) at which the lease can no longer be proven held
my $input = '';
my ($pid, $stopping, $kill_at, $killing_since, $status);

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

# Waits up to $timeout s for the JVM to say something or a child to end; true if the JVM has.
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

# A deadline line's time on this guard's clock, or undef if it cannot be read here.
sub deadline_of {
    my ($kind, $n) = @_;
    return now() + $n / 1000 if $kind eq 'in';
    return $mono_ns ? $n / 1e9 : undef;
}

# Ends the guard without having started the command.
sub refuse {
    my $why = shift;
    tell_jvm("refused $why");
    exit 70;
}

# The command must not start unguarded, nor once its lease may be gone: wait for the JVM's start,
# which it sends only after confirming the lease with the store, with the deadline computed then.
my $waited = 0;
my @pending;             # what came after the start in the same read: handled once the command runs
while (!defined $deadline) {
    refuse('no word from turnstile') if $waited++ > 300;   # 30 s
    next unless wait_readable(0.1);
    for my $line (read_jvm()) {
        if (defined $deadline) {
            push @pending, $line;
        } elsif ($line eq 'gone') {
            exit 70;
        } elsif ($line =~ /^start (at|in) (\d+)$/) {
            $deadline = deadline_of($1, $2);
            refuse('unreadable deadline') unless defined $deadline;
            # SIGTERM would be due already: the lease is too close to its end (a paused turnstile)
            refuse('deadline too close') if $deadline - now() <= $grace;
        } elsif ($line eq 'kill' || $line =~ /^stop /) {
            tell_jvm('ack');
            refuse('told to stop');
        } else {
            tell_jvm('ack');    # a deadline or a signal before the start: nothing to do
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
    # Last look at the deadline: the guard may have been paused since it read it.
    if ($deadline - now() <= $grace) {
        syswrite($exec_error_out, pack('N', 0xFFFFFFFF));
        POSIX::_exit(70);
    }
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
    waitpid($pid, 0);
    my $errno = unpack('N', $errno_bytes);
    refuse('deadline too close') if $errno == 0xFFFFFFFF;
    local $! = $errno;
    my $why = "$!";
    my $code = 126;
    if ($! == POSIX::ENOENT()) {
        # ENOENT for a file that exists means its #! interpreter is missing, as the shell says.
        ($code, $why) = resolves($command[0])
            ? (126, 'bad interpreter (the #! line names a program that does not exist)')
            : (127, 'command not found');
    }
    # a name of any length (up to the kernel's 128 KiB) would otherwise flood the terminal or cron mail
    my $shown = length($command[0]) > 200 ? substr($command[0], 0, 200) . '... (' . length($command[0]) . ' bytes)' : $command[0];
    print STDERR "turnstile: cannot run '$shown': $why\n";
    tell_jvm("exit $code");
    exit $code;
}
tell_jvm("pid $pid");
tell_jvm('ack');         # the start

sub resolves {
    my $name = shift;
    return -e $name if $name =~ m{/};
    return scalar grep { -f "$_/$name" } split /:/, ($ENV{PATH} // '/usr/bin:/bin');
}

# Reaps every child that has ended: the command (its status is the exit code) and, as a
# subreaper, the orphans that were handed to the guard.
sub reap {
    while ((my $child = waitpid(-1, POSIX::WNOHANG())) > 0) {
        $status = $? if $child == $pid && !defined $status;
    }
}

# What the command started, found through /proc where there is one (zombies left out): as a
# subreaper everything below the guard, which holds orphans too; otherwise what is below the
# command (the group itself is signalled as a whole).
sub descendants {
    my %children;
    for my $stat (glob '/proc/[0-9]*/stat') {
        open(my $fh, '<', $stat) or next;
        my $line = <$fh> // next;
        push @{ $children{$3} }, $1 if $line =~ /^(\d+) \(.*\) (\S) (\d+)/s && $2 ne 'Z';
    }
    my (@found, @todo);
    @todo = ($subreaper ? $$ : $pid);
    while (@todo) {
        for my $child (@{ $children{ shift @todo } // [] }) {
            push @found, $child;
            push @todo, $child;
        }
    }
    return @found;
}

sub tree_alive {
    return 1 if kill(0, -$pid);
    return $subreaper && descendants() ? 1 : 0;
}

sub signal_all {
    my $sig = shift;
    my @below = descendants();
    kill $sig, -$pid;
    kill $sig, @below if @below;
}

# Starts stopping the command: SIG to the whole tree now, SIGKILL at min(now + grace, deadline);
# a KILL while stopping already comes at once. The reasons only the guard knows it says itself:
# the JVM may be dead or frozen.
sub stop {
    my ($sig, $reason) = @_;
    if ($stopping) {
        $kill_at = now() if $sig eq 'KILL';
        return;
    }
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
        return;
    }
    if ($line =~ /^deadline (at|in) (\d+)$/) {
        my $d = deadline_of($1, $2);
        $deadline = $d if defined $d;
    } elsif ($line =~ /^stop ([A-Z0-9]+)$/) {
        stop($1);
    } elsif ($line eq 'kill') {
        stop('KILL');
    } elsif ($line =~ /^signal ([A-Z0-9]+)$/) {
        kill $1, $pid;   # to the command alone, as `kill -SIG` to it would: its helpers may not expect it
    }
    tell_jvm('ack');
}

handle($_) for @pending;
while (1) {
    reap();
    last if defined $status && !tree_alive();
    my $now = now();
    if (defined $stopping) {
        if ($now >= $kill_at) {
            signal_all('KILL');
            $killing_since //= $now;
            # SIGKILL cannot be caught; what still shows after 2 s is a zombie waiting for its
            # parent, or a process in an uninterruptible sleep that dies when it wakes.
            last if defined $status && $now - $killing_since > 2;
            $kill_at = $now + 0.05;
        }
    } elsif (defined $status) {
        stop('TERM', 'the command ended, but processes it started still run');
    } elsif ($now >= $deadline - $grace) {
        stop('TERM', 'the lease could not be renewed in time (turnstile frozen, or the store unreachable)');
    }
    my $timeout = (defined $stopping ? $kill_at : $deadline - $grace) - now();
    $timeout = 0.2 if $timeout > 0.2;   # also polls what is left of the tree
    $timeout = 0 if $timeout < 0;
    handle($_) for wait_readable($timeout) ? read_jvm() : ();
}

my $code = POSIX::WIFEXITED($status) ? POSIX::WEXITSTATUS($status)
         : POSIX::WIFSIGNALED($status) ? 128 + POSIX::WTERMSIG($status) : 70;
tell_jvm("exit $code");
exit $code;
