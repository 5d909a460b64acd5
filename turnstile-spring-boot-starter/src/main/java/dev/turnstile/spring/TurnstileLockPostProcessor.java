package dev.turnstile.spring;

import java.lang.reflect.Method;
import java.util.Map;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * Proxies beans that have {@link TurnstileLock} methods, and resolves every such method when the
 * bean is created so that bad values stop the start-up. Runs after the usual auto-proxy creators
 * (adding its advice in front of theirs, so the lock is taken outside a transaction) and before
 * {@code @Scheduled} processing (which must schedule the proxy, not the target).
 */
final class TurnstileLockPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {
    private static final long serialVersionUID = 1L;

    private final transient LockedMethodInterceptor interceptor;

    TurnstileLockPostProcessor(LockedMethodInterceptor interceptor) {
        this.interceptor = interceptor;
        this.advisor = new DefaultPointcutAdvisor(AnnotationMatchingPointcut.forMethodAnnotation(TurnstileLock.class), interceptor);
        setBeforeExistingAdvisors(true);
        setProxyTargetClass(true);
        setOrder(Ordered.LOWEST_PRECEDENCE - 100);
    }

    /** The interceptor, whose resolved methods give the console's jobs page each scheduled job's name. */
    LockedMethodInterceptor interceptor() {
        return interceptor;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (isEligible(bean, beanName)) {
            Class<?> targetClass = ClassUtils.getUserClass(org.springframework.aop.support.AopUtils.getTargetClass(bean));
            Map<Method, TurnstileLock> annotated = MethodIntrospector.selectMethods(targetClass,
                    (MethodIntrospector.MetadataLookup<TurnstileLock>) m -> AnnotatedElementUtils.findMergedAnnotation(m, TurnstileLock.class));
            for (Method m : annotated.keySet()) {
                try {
                    interceptor.describe(m, targetClass);
                } catch (IllegalArgumentException e) {
                    throw new BeanInitializationException("bean '" + beanName + "': " + e.getMessage(), e);
                }
            }
        }
        return super.postProcessAfterInitialization(bean, beanName);
    }
}
