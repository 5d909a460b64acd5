package dev.turnstile.spring.actuate;

import dev.turnstile.Lease;
import dev.turnstile.LockInfo;
import dev.turnstile.Turnstile;
import java.security.Principal;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.util.ClassUtils;

/**
 * The {@code turnstile} Actuator endpoint. {@code GET /actuator/turnstile} lists the locks the
 * store holds (as {@code turnstile locks} does) and those this instance holds;
 * {@code DELETE /actuator/turnstile/{name}} frees one lock whoever holds it, logged at WARN with who
 * asked. Like every endpoint, it is exposed over HTTP only when listed in
 * {@code management.endpoints.web.exposure.include}; secure it as the other write endpoints.
 */
@Endpoint(id = "turnstile")
public class TurnstileEndpoint {
    private static final Logger log = LoggerFactory.getLogger(TurnstileEndpoint.class);
    private static final boolean SERVLET = ClassUtils.isPresent(
            "org.springframework.web.context.request.RequestContextHolder", TurnstileEndpoint.class.getClassLoader())
            && ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest", TurnstileEndpoint.class.getClassLoader());

    private final Turnstile turnstile;

    /**
     * Creates the endpoint.
     *
     * @param turnstile the client whose store is listed
     */
    public TurnstileEndpoint(Turnstile turnstile) {
        this.turnstile = turnstile;
    }

    /**
     * Lists the store's held locks and this instance's leases.
     *
     * @return the report
     * @throws dev.turnstile.StoreUnavailableException if the store cannot be reached
     */
    @ReadOperation
    public LocksReport locks() {
        List<LockView> locks = turnstile.heldLocks().stream().map(LockView::of).toList();
        List<LockView> mine = turnstile.heldLeases().stream().map(LockView::of).toList();
        return new LocksReport(turnstile.store().description(), turnstile.owner(), locks, mine);
    }

    /**
     * Frees a lock whoever holds it. The holder is told at once on a store that tells of releases
     * (Redis, ZooKeeper, PostgreSQL), else at its next renewal (it loses the lease),
     * and the fence is kept, so a stale holder's writes can still be rejected.
     *
     * @param name the lock name; slashes are allowed ({@code DELETE /actuator/turnstile/jobs/report})
     * @param security who asked
     * @return whether a held lock was freed
     * @throws IllegalArgumentException if the name is not a valid lock name
     */
    @DeleteOperation
    public ReleaseReport release(@Selector(match = Selector.Match.ALL_REMAINING) String[] name, SecurityContext security) {
        String lock = Turnstile.checkLockName(String.join("/", name));
        Optional<LockInfo> before = turnstile.heldLocks().stream().filter(l -> l.name().equals(lock)).findFirst();
        boolean freed = turnstile.forceRelease(lock);
        String who = who(security);
        if (freed) {
            log.warn("lock '{}' force-released through the actuator endpoint by {} (it was held by {}, fence {})", lock, who,
                    before.map(LockInfo::owner).orElse("?"), before.map(l -> Long.toString(l.fence())).orElse("?"));
        } else {
            log.warn("force-release of lock '{}' asked through the actuator endpoint by {}: it was not held", lock, who);
        }
        return new ReleaseReport(lock, freed, before.map(LockInfo::owner).orElse(null));
    }

    private static String who(SecurityContext security) {
        Principal principal = security != null ? security.getPrincipal() : null;
        String remote = SERVLET ? ServletRemote.address() : null;
        String user = principal != null && principal.getName() != null ? principal.getName() : "anonymous";
        return remote != null ? user + " from " + remote : user;
    }

    /** Kept apart so that the endpoint loads without spring-web and the servlet API. */
    private static final class ServletRemote {
        static @Nullable String address() {
            if (org.springframework.web.context.request.RequestContextHolder.getRequestAttributes()
                    instanceof org.springframework.web.context.request.ServletRequestAttributes attrs) {
                return attrs.getRequest().getRemoteAddr();
            }
            return null;
        }
    }

    /**
     * What {@code GET /actuator/turnstile} returns.
     *
     * @param store the store, without secrets
     * @param owner this instance's owner identity
     * @param locks every lock the store holds, by name
     * @param heldByThisInstance the leases this instance holds
     */
    public record LocksReport(String store, String owner, List<LockView> locks, List<LockView> heldByThisInstance) {}

    /**
     * One held lock. Times are ISO-8601 instants by the store's clock.
     *
     * @param name the lock name
     * @param owner the holder
     * @param fence the holder's fence
     * @param acquiredAt when it was acquired (null if the store did not say)
     * @param expiresAt when the lease ends unless renewed (null if the store did not say)
     */
    public record LockView(String name, String owner, long fence, @Nullable String acquiredAt, @Nullable String expiresAt) {
        static LockView of(LockInfo l) {
            return new LockView(l.name(), l.owner(), l.fence(), text(l.acquiredAt()), text(l.expiresAt()));
        }

        static LockView of(Lease l) {
            return new LockView(l.name(), l.owner(), l.fence(), text(l.acquiredAt()), text(l.expiresAt()));
        }

        // a store outside Turnstile (through the SPI) may leave a time out: shown as null, not a failure
        private static @Nullable String text(@Nullable Instant i) {
            return i != null ? i.toString() : null;
        }
    }

    /**
     * What {@code DELETE /actuator/turnstile/{name}} returns.
     *
     * @param name the lock name
     * @param released whether a held lock was freed
     * @param previousOwner who held it, if it was held; else null
     */
    public record ReleaseReport(String name, boolean released, @Nullable String previousOwner) {}
}
