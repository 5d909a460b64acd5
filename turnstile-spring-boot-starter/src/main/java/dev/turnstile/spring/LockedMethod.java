package dev.turnstile.spring;

import dev.turnstile.Turnstile;
import dev.turnstile.job.JobOptions;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.PropertyResolver;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.ParserContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * One {@link TurnstileLock} method, resolved once: its name (or the SpEL template of it) and its
 * options. Every check that can be made without the arguments is made here, at start-up.
 */
final class LockedMethod {
    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

    private static final Pattern VARIABLE = Pattern.compile("#([A-Za-z_$][A-Za-z0-9_$]*)");
    private static final Pattern BUILT_IN = Pattern.compile("[pa]\\d+|root|this");

    private final Method method;
    private final String where;
    private final String staticName;
    private final Expression nameTemplate;
    private final JobOptions options;
    private final boolean returnsOptional;

    private LockedMethod(Method method, String where, String staticName, Expression nameTemplate, JobOptions options) {
        this.method = method;
        this.where = where;
        this.staticName = staticName;
        this.nameTemplate = nameTemplate;
        this.options = options;
        this.returnsOptional = method.getReturnType() == Optional.class;
    }

    /**
     * Resolves the annotation of {@code method}, with the class's defaults and the application's.
     *
     * @throws IllegalArgumentException naming the method and the fix
     */
    static LockedMethod resolve(Method method, Class<?> targetClass, PropertyResolver env, JobOptions appDefaults) {
        String where = describe(method, targetClass);
        TurnstileLock lock = AnnotatedElementUtils.findMergedAnnotation(method, TurnstileLock.class);
        if (lock == null) {
            throw new IllegalStateException(where + " has no @TurnstileLock");
        }
        try {
            Class<?> returns = method.getReturnType();
            if (returns.isPrimitive() && returns != void.class) {
                throw new IllegalArgumentException("it returns " + returns.getName() + ", but a skipped run has no value to "
                        + "return: make it return void, an object (null when skipped) or Optional (empty when skipped)");
            }
            TurnstileLockDefaults classDefaults = AnnotatedElementUtils.findMergedAnnotation(targetClass, TurnstileLockDefaults.class);
            JobOptions.Builder options = appDefaults.toBuilder();
            if (classDefaults != null) {
                apply(options, env, "@TurnstileLockDefaults(lockAtMostFor)", classDefaults.lockAtMostFor(), true);
                apply(options, env, "@TurnstileLockDefaults(lockAtLeastFor)", classDefaults.lockAtLeastFor(), false);
            }
            apply(options, env, "lockAtMostFor", lock.lockAtMostFor(), true);
            apply(options, env, "lockAtLeastFor", lock.lockAtLeastFor(), false);
            JobOptions built = options.build();

            String raw = lock.name();
            if (raw == null || raw.isBlank()) {
                throw new IllegalArgumentException("the lock name is blank: give one, e.g. @TurnstileLock(name = \"nightly-report\")");
            }
            String name = placeholders(env, "name", raw);
            if (name.contains(ParserContext.TEMPLATE_EXPRESSION.getExpressionPrefix())) {
                Expression template;
                try {
                    template = PARSER.parseExpression(name, ParserContext.TEMPLATE_EXPRESSION);
                } catch (ParseException e) {
                    throw new IllegalArgumentException("the lock name '" + name + "' is not a valid SpEL template ("
                            + e.getMessage() + "): write the dynamic parts as #{...}, e.g. \"invoice-#{#customerId}\"", e);
                }
                checkVariables(method, name);
                return new LockedMethod(method, where, null, template, built);
            }
            Turnstile.checkLockName(name);
            return new LockedMethod(method, where, name, null, built);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("@TurnstileLock on " + where + ": " + e.getMessage(), e);
        }
    }

    /**
     * A name that refers to an argument by a name the class file does not have evaluates to null on
     * every call; say so at start-up instead.
     */
    private static void checkVariables(Method method, String template) {
        String[] names = PARAMETER_NAMES.getParameterNames(method);
        Matcher m = VARIABLE.matcher(template);
        while (m.find()) {
            String v = m.group(1);
            if (BUILT_IN.matcher(v).matches()) {
                continue;
            }
            if (names == null) {
                throw new IllegalArgumentException("the lock name refers to #" + v + ", but the class was compiled without "
                        + "parameter names: compile with -parameters (Spring Boot's Maven and Gradle plugins do), or refer to "
                        + "arguments by position as #p0, #p1…");
            }
            if (!Arrays.asList(names).contains(v)) {
                throw new IllegalArgumentException("the lock name refers to #" + v + ", which is not a parameter of the method "
                        + "(its parameters are " + String.join(", ", names) + "): use one of them, or #p0, #p1… by position");
            }
        }
    }

    private static void apply(JobOptions.Builder options, PropertyResolver env, String what, String value, boolean atMost) {
        if (value == null || value.isEmpty()) {
            return;
        }
        Duration d = duration(env, what, value);
        if (atMost) {
            options.lockAtMostFor(d);
        } else {
            options.lockAtLeastFor(d);
        }
    }

    private static Duration duration(PropertyResolver env, String what, String value) {
        String resolved = placeholders(env, what, value).trim();
        try {
            return DurationStyle.detectAndParse(resolved);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + " '" + resolved + "' is not a duration: use a number with a unit, "
                    + "such as 500ms, 30s, 5m, 2h or 1d, or ISO-8601 such as PT30S", e);
        }
    }

    private static String placeholders(PropertyResolver env, String what, String value) {
        try {
            return env.resolveRequiredPlaceholders(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + " '" + value + "' has a placeholder with no value (" + e.getMessage()
                    + "): set the property, or give a default as ${name:default}", e);
        }
    }

    private static String describe(Method method, Class<?> targetClass) {
        StringBuilder b = new StringBuilder(targetClass.getName()).append('.').append(method.getName()).append('(');
        Class<?>[] types = method.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            b.append(i == 0 ? "" : ", ").append(types[i].getSimpleName());
        }
        return b.append(')').toString();
    }

    /** @return the method as messages name it, e.g. {@code com.acme.Jobs.report()} */
    String where() {
        return where;
    }

    JobOptions options() {
        return options;
    }

    /** What a skipped call returns: empty for an {@code Optional} method, else null. */
    Object skippedValue() {
        return returnsOptional ? Optional.empty() : null;
    }

    /**
     * The lock name for one call.
     *
     * @throws IllegalArgumentException if a SpEL name fails or evaluates to an invalid name
     */
    String name(Object target, Object[] args, BeanFactory beanFactory) {
        if (staticName != null) {
            return staticName;
        }
        MethodBasedEvaluationContext ctx = new MethodBasedEvaluationContext(target, method, args, PARAMETER_NAMES);
        if (beanFactory != null) {
            ctx.setBeanResolver(new BeanFactoryResolver(beanFactory));
        }
        String name;
        try {
            name = nameTemplate.getValue(ctx, String.class);
        } catch (EvaluationException e) {
            throw new IllegalArgumentException("@TurnstileLock on " + where + ": the lock name '"
                    + nameTemplate.getExpressionString() + "' could not be evaluated (" + e.getMessage()
                    + "); refer to arguments as #name (compiled with -parameters) or #p0, #p1…", e);
        }
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("@TurnstileLock on " + where + ": the lock name '"
                    + nameTemplate.getExpressionString() + "' evaluated to an empty name for this call: make the expression "
                    + "give a non-empty text for every argument, or check the argument");
        }
        try {
            return Turnstile.checkLockName(name);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("@TurnstileLock on " + where + ": the lock name '"
                    + nameTemplate.getExpressionString() + "' evaluated to an invalid name: " + e.getMessage(), e);
        }
    }
}
