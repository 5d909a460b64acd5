package dev.turnstile.zookeeper;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * Why no ZooKeeper server could be reached, in one line. The client only says that it did not
 * connect in time (its own reasons go to its log, one stack trace per attempt), so after a failed
 * connect each server of the connection string is looked at once, briefly: can its name be
 * resolved, does its port refuse, stay silent, or accept a connection and still not answer as
 * ZooKeeper.
 */
final class Unreachable {
    /** Per server; the look happens only after a connect timeout has already passed. */
    private static final int PROBE_MILLIS = 300;
    private static final int MAX_SERVERS = 5;

    private Unreachable() {}

    /**
     * Looks at the servers of a connection string.
     *
     * @param connect {@code host:port[,host:port…]}
     * @return for example {@code "connection refused by 127.0.0.1:1 (is ZooKeeper running there?)"}
     */
    static String diagnose(String connect) {
        List<String> causes = new ArrayList<>();
        String[] servers = connect.split(",");
        for (int i = 0; i < servers.length && i < MAX_SERVERS; i++) {
            String why = probe(servers[i].trim());
            if (!causes.contains(why)) {
                causes.add(why);
            }
        }
        return String.join("; ", causes);
    }

    private static String probe(String server) {
        int colon = server.lastIndexOf(':');
        String host = colon > 0 && !server.endsWith("]") ? server.substring(0, colon) : server;
        int port = 2181;
        try {
            port = colon > 0 && !server.endsWith("]") ? Integer.parseInt(server.substring(colon + 1)) : 2181;
        } catch (NumberFormatException e) {
            return server + ": not a host:port";
        }
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        InetAddress address;
        try {
            address = InetAddress.getByName(bare);
        } catch (UnknownHostException e) {
            return "unknown host " + host + " (check the host name)";
        }
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address, port), PROBE_MILLIS);
            return server + " accepted a connection but did not answer as a ZooKeeper server (wrong port, or not ZooKeeper?)";
        } catch (ConnectException e) {
            return "connection refused by " + server + " (is ZooKeeper running there, on that port?)";
        } catch (SocketTimeoutException e) {
            return "no answer from " + server + " (a firewall, or the host is down)";
        } catch (IOException e) {
            return server + ": " + e.getMessage();
        }
    }
}
