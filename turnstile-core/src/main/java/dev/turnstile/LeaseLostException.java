package dev.turnstile;

/**
 * Thrown by {@link Lease#extend} when the lease can no longer be proven held: it expired, was taken
 * over after expiry, or was force-released. The work it protected must stop; its fence may already
 * have been superseded.
 */
public class LeaseLostException extends TurnstileException {
    private static final long serialVersionUID = 1L;

    private final transient LeaseLoss loss;

    /**
     * Creates the exception.
     *
     * @param loss what was lost and why
     */
    public LeaseLostException(LeaseLoss loss) {
        super("lease on lock '" + loss.name() + "' (fence " + loss.fence() + ") is lost: " + loss.reason(), null);
        this.loss = loss;
    }

    /**
     * Returns the loss that caused this exception.
     *
     * @return the loss
     */
    public LeaseLoss loss() {
        return loss;
    }
}
