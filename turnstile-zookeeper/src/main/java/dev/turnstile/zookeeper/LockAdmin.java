package dev.turnstile.zookeeper;

import dev.turnstile.LockInfo;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * What an operator asks of a ZooKeeper store: who holds which lock, and a forced release. Both
 * judge expiry on the server's clock (a write to the store's clock node), and neither loops: a
 * forced release looks again at most {@link LockNodes#MAX_RACES} times.
 */
final class LockAdmin {
    private final CuratorFramework client;
    private final LockNodes nodes;

    LockAdmin(CuratorFramework client, LockNodes nodes) {
        this.client = client;
        this.nodes = nodes;
    }

    /** The held locks, by name: each one's holder is its unexpired hold marker, else its first unexpired lease. */
    List<LockInfo> heldLocks() {
        long now = nodes.serverNow();
        List<String> names;
        try {
            names = client.getChildren().forPath(nodes.base() + "/locks");
        } catch (KeeperException.NoNodeException none) {
            return List.of();
        } catch (Exception e) {
            throw nodes.failure("listing locks", e);
        }
        List<LockInfo> out = new ArrayList<>();
        for (String encoded : names) {
            String name = LockNodes.decode(encoded);
            Holder h = holder(nodes.lockPath(name), now);
            if (h != null) {
                long fence = h.data().fence() != null ? h.data().fence() : h.stat().getCzxid();
                long acquired = h.data().leaseStartMs(h.stat());
                // a node whose JSON has no owner (not written by Turnstile) is held by nobody known,
                // as NodeData.parse says of an unreadable one
                String owner = Objects.requireNonNullElse(h.data().owner(), "?");
                out.add(new LockInfo(name, owner, fence, Instant.ofEpochMilli(acquired),
                        Instant.ofEpochMilli(h.data().expiresAtMs(h.stat()))));
            }
        }
        out.sort(Comparator.comparing(LockInfo::name));
        return out;
    }

    private record Holder(String path, Stat stat, NodeData data) {}

    /** The unexpired hold marker, else the lowest unexpired lease node, of a lock; null if free. */
    private @Nullable Holder holder(String parent, long now) {
        List<String> children = nodes.children(parent);
        List<String> order = new ArrayList<>();
        if (children.contains(LockNodes.HOLD)) {
            order.add(LockNodes.HOLD);
        }
        order.addAll(LockNodes.sorted(children));
        for (String child : order) {
            Stat stat = new Stat();
            try {
                NodeData data = NodeData.parse(client.getData().storingStatIn(stat).forPath(parent + "/" + child));
                if (!data.isPlace() && data.expiresAtMs(stat) > now) {
                    return new Holder(parent + "/" + child, stat, data);
                }
            } catch (KeeperException.NoNodeException gone) {
                // released meanwhile
            } catch (Exception e) {
                throw nodes.failure("reading " + parent, e);
            }
        }
        return null;
    }

    /**
     * Deletes the holder's node: the lease node, or the hold marker and then the lease behind it if
     * one is there. True if it ended anything.
     */
    boolean forceRelease(String name) {
        String parent = nodes.lockPath(name);
        long now = nodes.serverNow();
        boolean freed = false;
        for (int attempt = 0; attempt < LockNodes.MAX_RACES; attempt++) {
            Holder h = holder(parent, now);
            if (h == null) {
                return freed;
            }
            try {
                client.delete().forPath(h.path());
                freed = true;
            } catch (KeeperException.NoNodeException gone) {
                // released meanwhile: look again
            } catch (Exception e) {
                throw nodes.failure("force-releasing lock '" + name + "'", e);
            }
            if (freed && !h.path().endsWith("/" + LockNodes.HOLD)) {
                return true;
            }
        }
        throw nodes.raced("force-releasing lock '" + name + "'");
    }
}
