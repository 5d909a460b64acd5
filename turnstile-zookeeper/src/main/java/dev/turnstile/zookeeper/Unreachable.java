package dev.turnstile.zookeeper;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Why no ZooKeeper server could be reached, in one line. The client only says that it did not
 * connect in time (its own reasons go to its log, one stack trace per attempt), so after a failed
 * connect each server of the connection string is looked at once, briefly: can its name be
 * resolved, does its port refuse, stay silent, accept a connection and not answer as ZooKeeper,
 * refuse ZooKeeper's connect request (a server without a quorum), or answer it (a server that is
 * fine, and only slower than the connect timeout).
 *
 * <p>The look happens only after a connect timeout has already passed, so it is bounded as a
 * whole, not per server: the servers are looked at side by side and the whole look ends within
 * {@link #BUDGET_MILLIS}. A failed connect then costs the connect timeout and at most that.
 */
final class Unreachable {
    /** The whole look, every server included. */
    static final int BUDGET_MILLIS = 600;
    /** A TCP connect that takes longer than this, on top of a connect timeout, counts as no answer. */
    private static final int CONNECT_MILLIS = 300;
    /** Servers looked at (one thread each); the rest are counted, not looked at. */
    static final int MAX_SERVERS = 8;

    private Unreachable() {}

    /**
     * Looks at the servers of a connection string.
     *
     * @param connect {@code host:port[,host:port…][/chroot]}
     * @return for example {@code "connection refused by 127.0.0.1:1, 127.0.0.1:2 (is ZooKeeper running there?)"}
     */
    @SuppressWarnings("StringSplitter") // a trailing ',' names no server, as Curator reads it too
    static String diagnose(String connect) {
        int slash = connect.indexOf('/');
        String[] servers = (slash < 0 ? connect : connect.substring(0, slash)).split(",");
        int looked = Math.min(servers.length, MAX_SERVERS);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BUDGET_MILLIS);
        List<CompletableFuture<Look>> looks = new ArrayList<>();
        for (int i = 0; i < looked; i++) {
            String server = servers[i].trim();
            CompletableFuture<Look> look = new CompletableFuture<>();
            // each probe ends its own waits a little before the look does, so its finding is in time to be told
            long own = deadline - TimeUnit.MILLISECONDS.toNanos(100);
            Thread t = new Thread(() -> look.complete(probe(server, own)), "turnstile-zookeeper-probe");
            t.setDaemon(true);
            t.start();
            looks.add(look);
        }
        // the same cause for several servers is said once, naming them all
        Map<String, List<String>> byCause = new LinkedHashMap<>();
        for (int i = 0; i < looked; i++) {
            Look look;
            try {
                long left = Math.max(1, deadline - System.nanoTime());
                look = looks.get(i).get(left, TimeUnit.NANOSECONDS);
            } catch (TimeoutException | ExecutionException e) {
                look = new Look(NO_ANSWER, servers[i].trim());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                look = new Look(NO_ANSWER, servers[i].trim());
            }
            byCause.computeIfAbsent(look.cause(), k -> new ArrayList<>()).add(look.who());
        }
        List<String> causes = new ArrayList<>();
        byCause.forEach((cause, who) -> causes.add(cause.formatted(String.join(", ", who))));
        String out = String.join("; ", causes);
        if (servers.length > looked) {
            int more = servers.length - looked;
            out += "; and " + more + " more server" + (more == 1 ? "" : "s") + " not looked at";
        }
        return out;
    }

    /** What was found at one server: a cause with {@code %s} for the servers it applies to. */
    private record Look(String cause, String who) {}

    /**
     * Sends ZooKeeper's own connect request, as the client does, and reads what comes back. The
     * four-letter words ({@code ruok}, {@code srvr}) would say more but are often disabled; the
     * connect request is always served. A server that is up but not serving (an ensemble member
     * without a quorum, or one still starting) reads the request and closes the connection with no
     * answer ("ZooKeeperServer not running" in its log). A serving one answers with a session,
     * which is closed again at once (so it does not linger until its timeout): then ZooKeeper is
     * fine and only slower than turnstile.connectTimeout.
     */
    private static Look handshake(Socket socket, String server, long deadline) throws IOException {
        java.io.DataOutputStream out = new java.io.DataOutputStream(new java.io.BufferedOutputStream(socket.getOutputStream()));
        out.writeInt(45);          // length of what follows
        out.writeInt(0);           // protocol version
        out.writeLong(0);          // last zxid seen
        out.writeInt(4000);        // session timeout asked for (the server clamps it)
        out.writeLong(0);          // session id: a new session
        out.writeInt(16);          // password: 16 zero bytes for a new session
        out.write(new byte[16]);
        out.writeBoolean(false);   // not read-only: a server without a quorum must refuse it
        out.flush();
        java.io.DataInputStream in = new java.io.DataInputStream(socket.getInputStream());
        int length;
        try {
            socket.setSoTimeout((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            length = in.readInt();
        } catch (java.io.EOFException | java.net.SocketException closed) {
            return new Look("%s closed the connection on ZooKeeper's connect request without an answer: a ZooKeeper "
                    + "server that is not serving (no quorum: are the other servers of the ensemble up?), or not ZooKeeper", server);
        } catch (SocketTimeoutException silent) {
            return new Look("%s accepted a connection but did not answer as a ZooKeeper server (wrong port, not ZooKeeper, "
                    + "or overloaded?)", server);
        }
        if (length >= 36 && length <= 64) {
            try {
                int protocol = in.readInt();
                int timeout = in.readInt();
                long session = in.readLong();
                if (protocol == 0 && timeout > 0 && session != 0) {
                    out.writeInt(8);   // closeSession, so the probe's session goes now
                    out.writeInt(1);   // xid
                    out.writeInt(-11); // OpCode.closeSession
                    out.flush();
                    return new Look("%s answered as a ZooKeeper server, but not within turnstile.connectTimeout (give a "
                            + "longer one)", server);
                }
            } catch (IOException ignored) {
                // fall through: not ZooKeeper's answer
            }
        }
        return new Look("%s answered, but not as a ZooKeeper server (wrong port?)", server);
    }

    private static final String NO_ANSWER = "no answer from %s (a firewall, or the host is down)";

    private static Look probe(String server, long deadline) {
        int colon = server.lastIndexOf(':');
        String host = colon > 0 && !server.endsWith("]") ? server.substring(0, colon) : server;
        int port;
        try {
            port = colon > 0 && !server.endsWith("]") ? Integer.parseInt(server.substring(colon + 1)) : 2181;
        } catch (NumberFormatException e) {
            return new Look("%s: not a host:port", server);
        }
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        InetAddress address;
        try {
            address = InetAddress.getByName(bare);
        } catch (UnknownHostException e) {
            return new Look("unknown host %s (check the host name)", host);
        }
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address, port), (int) Math.max(1, Math.min(CONNECT_MILLIS, left)));
            return handshake(socket, server, deadline);
        } catch (ConnectException e) {
            return new Look("connection refused by %s (is ZooKeeper running there, on that port?)", server);
        } catch (SocketTimeoutException e) {
            return new Look(NO_ANSWER, server);
        } catch (IOException e) {
            // an IOException need not have a message: then its class says what went wrong
            String message = Objects.requireNonNullElse(e.getMessage(), e.getClass().getName());
            return new Look("%s: " + message.replace("%", "%%"), server);
        }
    }
}
