package dev.turnstile;

import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.Base64;

/** Default owner identities and ownership tokens. */
final class Owners {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

    private Owners() {}

    /** host:pid:random — two JVMs on one host never look alike. */
    static String defaultOwner() {
        String host;
        try {
            host = System.getenv().getOrDefault("HOSTNAME", "");
            if (host.isBlank()) {
                host = InetAddress.getLocalHost().getHostName();
            }
        } catch (Exception e) {
            host = "unknown-host";
        }
        byte[] id = new byte[4];
        RANDOM.nextBytes(id);
        String owner = host + ":" + ProcessHandle.current().pid() + ":" + B64.encodeToString(id);
        return owner.length() > Validation.MAX_NAME_LENGTH ? owner.substring(owner.length() - Validation.MAX_NAME_LENGTH) : owner;
    }

    /** 128 random bits: a bearer capability, so it comes from SecureRandom. */
    static String newToken() {
        byte[] t = new byte[16];
        RANDOM.nextBytes(t);
        return B64.encodeToString(t);
    }
}
