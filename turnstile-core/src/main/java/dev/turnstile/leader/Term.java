package dev.turnstile.leader;

import java.time.Instant;

/**
 * One term of leadership: the role, the fence of the lease that holds it (strictly greater than
 * every earlier term's on the same store, so a resource can reject a deposed leader's writes), and
 * when it was granted.
 *
 * @param role the role name (its lock name)
 * @param fence the fence of this term's lease
 * @param grantedAt when the store granted it, by the store's clock
 */
public record Term(String role, long fence, Instant grantedAt) {}
