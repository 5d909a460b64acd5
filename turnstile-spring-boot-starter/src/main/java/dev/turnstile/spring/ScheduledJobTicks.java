package dev.turnstile.spring;

import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.scheduling.config.ScheduledTask;
import org.springframework.scheduling.config.ScheduledTaskHolder;
import org.springframework.scheduling.support.ScheduledMethodRunnable;

/**
 * The next tick of each {@code @Scheduled} method that holds a {@code @TurnstileLock} of a fixed
 * name (no SpEL), by lock name, for the console's jobs page: Spring's scheduled tasks say when they
 * run next ({@link ScheduledTask#nextExecution()}), the lock interceptor which lock each method holds.
 */
final class ScheduledJobTicks implements Supplier<Map<String, Instant>> {
    private final ObjectProvider<ScheduledTaskHolder> holders;
    private final ObjectProvider<TurnstileLockPostProcessor> locks;

    ScheduledJobTicks(ObjectProvider<ScheduledTaskHolder> holders, ObjectProvider<TurnstileLockPostProcessor> locks) {
        this.holders = holders;
        this.locks = locks;
    }

    @Override
    public Map<String, Instant> get() {
        TurnstileLockPostProcessor processor = locks.getIfAvailable();
        if (processor == null) {
            return Map.of();
        }
        Map<String, String> names = processor.interceptor().fixedNamesByMethod();
        Map<String, Instant> out = new TreeMap<>();
        holders.orderedStream().forEach(holder -> {
            for (ScheduledTask task : holder.getScheduledTasks()) {
                String name = names.get(methodName(task.getTask().getRunnable()));
                Instant next = task.nextExecution();
                if (name != null && next != null) {
                    out.merge(name, next, (a, b) -> a.isBefore(b) ? a : b);
                }
            }
        });
        return out;
    }

    /**
     * {@code declaring.Class.method} of a scheduled method. Spring 6.2 and later wrap the method's
     * runnable in one that tracks outcomes and names itself after the method (its {@code toString}).
     */
    static String methodName(Runnable r) {
        if (r instanceof ScheduledMethodRunnable m) {
            return m.getMethod().getDeclaringClass().getName() + "." + m.getMethod().getName();
        }
        return String.valueOf(r);
    }
}
