package dev.turnstile.claim;

import java.time.Instant;

/**
 * Why and when a claim stopped being held. Delivered through {@link Claim#lost()}.
 *
 * @param id the task's key, as text
 * @param version the claim version that was lost
 * @param reason a sentence saying why the claim can no longer be proven held
 * @param detectedAt when this process noticed (local wall clock, for logs only)
 */
public record ClaimLoss(String id, long version, String reason, Instant detectedAt) {}
