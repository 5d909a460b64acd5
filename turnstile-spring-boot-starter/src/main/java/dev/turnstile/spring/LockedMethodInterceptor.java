package dev.turnstile.spring;

import dev.turnstile.job.JobResult;
import dev.turnstile.job.JobRunner;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.env.PropertyResolver;

/**
 * Runs each {@link TurnstileLock} call through the {@link JobRunner}. Methods are resolved once
 * (eagerly at bean creation by {@link TurnstileLockPostProcessor}) and cached.
 */
final class LockedMethodInterceptor implements MethodInterceptor {
    private static final Logger log = LoggerFactory.getLogger(LockedMethodInterceptor.class);

    private final Supplier<JobRunner> runner;
    private final Supplier<TurnstileLifecycle> lifecycle;
    private final PropertyResolver env;
    private final BeanFactory beanFactory;
    private final Map<MethodKey, LockedMethod> methods = new ConcurrentHashMap<>();

    private record MethodKey(Method method, Class<?> targetClass) {}

    LockedMethodInterceptor(Supplier<JobRunner> runner, Supplier<TurnstileLifecycle> lifecycle, PropertyResolver env,
            BeanFactory beanFactory) {
        this.runner = runner;
        this.lifecycle = lifecycle;
        this.env = env;
        this.beanFactory = beanFactory;
    }

    /** Resolves (and caches) a method; throws what {@link LockedMethod#resolve} throws. */
    LockedMethod describe(Method method, Class<?> targetClass) {
        return methods.computeIfAbsent(new MethodKey(method, targetClass),
                k -> LockedMethod.resolve(k.method(), k.targetClass(), env, runner.get().defaults()));
    }

    /**
     * The lock names of the methods resolved so far that take no arguments and have a fixed name
     * (what a {@code @Scheduled} method is), by {@code declaring.Class.method}: how Spring's
     * {@code ScheduledMethodRunnable} names the method it runs.
     */
    Map<String, String> fixedNamesByMethod() {
        Map<String, String> out = new java.util.HashMap<>();
        methods.forEach((key, locked) -> {
            String name = locked.fixedName();
            if (name != null && key.method().getParameterCount() == 0) {
                out.put(key.method().getDeclaringClass().getName() + "." + key.method().getName(), name);
            }
        });
        return out;
    }

    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : invocation.getMethod().getDeclaringClass();
        Method specific = AopUtils.getMostSpecificMethod(invocation.getMethod(), targetClass);
        LockedMethod locked = describe(specific, targetClass);
        String name = locked.name(target, invocation.getArguments(), beanFactory);
        TurnstileLifecycle lc = lifecycle.get();
        if (!lc.enter()) {
            log.debug("skipped {} (lock '{}'): the application is shutting down", locked.where(), name);
            return locked.skippedValue();
        }
        JobResult<Object> result;
        try {
            result = runner.get().call(name, locked.options(), () -> proceed(invocation));
        } finally {
            lc.exit();
        }
        if (result.ran()) {
            return result.value();
        }
        // JobRunner has logged it: busy at DEBUG, an unreachable store at ERROR.
        return locked.skippedValue();
    }

    private static @Nullable Object proceed(MethodInvocation invocation) throws Exception {
        try {
            return invocation.proceed();
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t);
        }
    }
}
