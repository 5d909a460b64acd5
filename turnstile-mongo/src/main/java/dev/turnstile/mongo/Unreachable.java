package dev.turnstile.mongo;

import com.mongodb.MongoSecurityException;
import com.mongodb.MongoSocketOpenException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.connection.ServerDescription;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Why no MongoDB server could be reached, in one line: the driver's own message is a dump of its
 * view of the cluster, with the cause of each server's failure deep inside. This reads that view
 * (each server's last error) and names the first cause that tells the user what to fix.
 */
final class Unreachable {
    private Unreachable() {}

    /**
     * The cause of a failed server selection, for a message.
     *
     * @param client the client whose cluster view to read
     * @param e what the driver threw
     * @return for example {@code "connection refused by 127.0.0.1:1 (is MongoDB running there?)"}
     */
    static String cause(MongoClient client, MongoTimeoutException e) {
        List<String> causes = new ArrayList<>();
        List<String> silent = new ArrayList<>();
        try {
            for (ServerDescription server : client.getClusterDescription().getServerDescriptions()) {
                String why = describe(server.getAddress().toString(), server.getException());
                if (why != null && !causes.contains(why)) {
                    causes.add(why);
                } else if (why == null) {
                    silent.add(server.getAddress().toString()); // still connecting: no answer, no error yet
                }
            }
            if (causes.isEmpty() && !silent.isEmpty()) {
                return String.join(", ", silent) + " did not answer in time (a firewall or a host that is down, a server "
                        + "that is not MongoDB, or one overloaded; turnstile.timeout or serverSelectionTimeoutMS)";
            }
        } catch (RuntimeException unreadable) {
            // the client is closing: the driver's message below is all there is
        }
        if (!causes.isEmpty()) {
            return String.join("; ", causes);
        }
        String message = String.valueOf(e.getMessage());
        if (message.contains("Failed looking up SRV record") || message.contains("SRV")) {
            return "the DNS SRV lookup of the mongodb+srv:// host failed (check the host name)";
        }
        return "no MongoDB server answered within the timeout (turnstile.timeout or serverSelectionTimeoutMS)";
    }

    /**
     * The cause, if no server is connected and every one refused the connection or has no address:
     * answers that do not change while a selection waits. Waits up to {@code waitMillis} for the
     * driver's first look at each server (a refusal takes milliseconds; a server still being looked
     * at, silent or slow, ends the wait at once after it).
     *
     * @param client the client whose cluster view to read
     * @param waitMillis how long to wait for servers not yet looked at
     * @return the cause, or null if a server is connected, may still answer, or none is known yet
     */
    static @Nullable String refusedEverywhere(MongoClient client, long waitMillis) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        while (true) {
            List<ServerDescription> servers;
            try {
                servers = client.getClusterDescription().getServerDescriptions();
            } catch (RuntimeException closing) {
                return null;
            }
            if (servers.isEmpty() || servers.stream().anyMatch(ServerDescription::isOk)) {
                return null; // a DNS SRV lookup still going, or a server to talk to
            }
            if (servers.stream().allMatch(server -> definite(server.getException()))) {
                List<String> causes = new ArrayList<>();
                for (ServerDescription server : servers) {
                    String why = describe(server.getAddress().toString(), server.getException());
                    if (!causes.contains(why)) {
                        causes.add(why);
                    }
                }
                return String.join("; ", causes);
            }
            if (servers.stream().noneMatch(server -> server.getException() == null) || System.nanoTime() - until > 0) {
                return null; // a server failed otherwise (silent, not MongoDB): the driver's timeout decides
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
    }

    private static boolean definite(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof ConnectException || t instanceof UnknownHostException) {
                return true;
            }
        }
        return false;
    }

    private static @Nullable String describe(String address, @Nullable Throwable failure) {
        if (failure == null) {
            return null;
        }
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof MongoSocketOpenException && t.getCause() instanceof SocketTimeoutException) {
                // the connect itself timed out: nothing accepted it (SYNs dropped by a firewall, or no host there)
                return "no answer from " + address + " to a connection attempt (a firewall, or the host is down)";
            }
            if (t instanceof UnknownHostException) {
                return "unknown host " + address.substring(0, Math.max(0, address.lastIndexOf(':'))) + " (check the host name)";
            }
            if (t instanceof ConnectException) {
                return "connection refused by " + address + " (is MongoDB running there, on that port?)";
            }
            if (t instanceof MongoSecurityException) {
                return "authentication failed at " + address + " (check the user, the password and authSource)";
            }
            if (t instanceof MongoSocketReadTimeoutException || t instanceof SocketTimeoutException) {
                return address + " accepted the connection but did not answer in time (not a MongoDB server, or overloaded)";
            }
            if (t instanceof MongoSocketReadException) {
                return address + " closed the connection without a MongoDB answer (not a MongoDB server?)";
            }
            if (t instanceof MongoSocketOpenException && t.getCause() == null) {
                return "cannot connect to " + address + ": " + t.getMessage();
            }
        }
        return address + ": " + failure.getMessage() + " (not a MongoDB server?)";
    }
}
