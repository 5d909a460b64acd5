package dev.turnstile.bench;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * The raw ZooKeeper floor: the least an ephemeral-node lock does, with the bare ZooKeeper client
 * (the one under the shared Curator client): {@code create(EPHEMERAL_SEQUENTIAL)} under the lock's
 * parent, then {@code delete} of that node (version -1). No check of other nodes, no data to speak
 * of, no fence: a floor, not a lock. Parents are {@code /bench/<lock name>}, made before timing.
 */
final class ZooKeeperFloorContender implements Contender {
    private final ZooKeeper zk;

    ZooKeeperFloorContender(ZooKeeper zk) {
        this.zk = zk;
    }

    @Override
    public String id() {
        return "FLOOR";
    }

    @Override
    public boolean acquireRelease(String lockName) throws Exception {
        String parent = "/bench/" + lockName;
        String path;
        try {
            path = zk.create(parent + "/lock-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL);
        } catch (org.apache.zookeeper.KeeperException.NoNodeException first) {
            try {
                zk.create(parent, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (org.apache.zookeeper.KeeperException.NodeExistsException raced) {
                // made by another thread
            }
            path = zk.create(parent + "/lock-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL);
        }
        zk.delete(path, -1);
        return true;
    }
}
