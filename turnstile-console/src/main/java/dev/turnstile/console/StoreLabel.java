package dev.turnstile.console;

import java.util.Locale;

/**
 * A store named by its kind only. A store's description holds its URL with the password masked,
 * but still its hosts and database; the console shows none of that.
 */
final class StoreLabel {
    private StoreLabel() {}

    static String of(String description) {
        String d = description.toLowerCase(Locale.ROOT);
        if (d.contains("postgresql")) {
            return "PostgreSQL";
        }
        if (d.contains("mariadb")) {
            return "MariaDB";
        }
        if (d.contains("mysql")) {
            return "MySQL";
        }
        if (d.contains("sqlite")) {
            return "SQLite";
        }
        if (d.contains("jdbc:h2") || d.startsWith("h2")) {
            return "H2";
        }
        if (d.contains("redlock")) {
            return "Redlock";
        }
        if (d.contains("redis-sentinel")) {
            return "Redis Sentinel";
        }
        if (d.contains("redis-cluster")) {
            return "Redis Cluster";
        }
        if (d.contains("redis")) {
            return "Redis";
        }
        if (d.contains("zookeeper")) {
            return "ZooKeeper";
        }
        if (d.contains("mongodb")) {
            return "MongoDB";
        }
        if (d.contains("memory")) {
            return "in-memory";
        }
        return "store";
    }
}
