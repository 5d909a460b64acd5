package dev.turnstile;

import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Calls the registered listeners; one that throws is logged and skipped, never breaks locking. */
final class Listeners {
    private static final Logger log = LoggerFactory.getLogger(TurnstileListener.class);

    private final List<TurnstileListener> listeners;

    Listeners(List<TurnstileListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    void acquired(String name, AcquireOutcome outcome, long startNanos) {
        if (listeners.isEmpty()) {
            return;
        }
        Duration latency = Duration.ofNanos(System.nanoTime() - startNanos);
        for (TurnstileListener l : listeners) {
            try {
                l.onAcquire(name, outcome, latency);
            } catch (RuntimeException e) {
                complain(l, "onAcquire", e);
            }
        }
    }

    void released(String name, long fence, long startNanos) {
        if (listeners.isEmpty()) {
            return;
        }
        Duration heldFor = Duration.ofNanos(System.nanoTime() - startNanos);
        for (TurnstileListener l : listeners) {
            try {
                l.onRelease(name, fence, heldFor);
            } catch (RuntimeException e) {
                complain(l, "onRelease", e);
            }
        }
    }

    void lost(LeaseLoss loss) {
        for (TurnstileListener l : listeners) {
            try {
                l.onLost(loss);
            } catch (RuntimeException e) {
                complain(l, "onLost", e);
            }
        }
    }

    void storeFailed(String name, RuntimeException error) {
        for (TurnstileListener l : listeners) {
            try {
                l.onStoreFailure(name, error);
            } catch (RuntimeException e) {
                complain(l, "onStoreFailure", e);
            }
        }
    }

    private static void complain(TurnstileListener l, String method, RuntimeException e) {
        log.warn("TurnstileListener {}.{} threw; ignored", l.getClass().getName(), method, e);
    }
}
