package dev.turnstile.spring;

import dev.turnstile.Turnstile;
import dev.turnstile.job.JobOptions;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.PropertyResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.ParserContext;
import org.springframework.expression.common.CompositeStringExpression;
import org.springframework.expression.common.LiteralExpression;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.ConstructorReference;
import org.springframework.expression.spel.ast.TypeReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;

/**
 * One {@link TurnstileLock} method, resolved once: its name (or the SpEL template of it) and its
 * options. Every check that can be made without the arguments is made here, at start-up.
 *
 * <p>Only the annotation's own text is parsed as SpEL. Its {@code #{...}} parts are expressions;
 * its {@code ${...}} placeholders are resolved at start-up and their values are data, never parsed:
 * a property or environment variable holding {@code #{T(java.lang.Runtime)...}} becomes those
 * characters of the name (configuration often comes from deployment tooling, and a name must not
 * run code). The expressions are evaluated in a read-only context that knows the arguments, the
 * bean as {@code #root}, instance methods and {@code @bean} references, and nothing else: no
 * {@code T(...)} types, no constructors, no assignment.
 */
final class LockedMethod {
    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

    private static final Pattern VARIABLE = Pattern.compile("#([A-Za-z_$][A-Za-z0-9_$]*)");
    private static final Pattern BUILT_IN = Pattern.compile("[pa]\\d+|root|this");

    private final Method method;
    private final String where;
    /** The lock name when it has no expression, else null (evaluated per call). */
    private final @Nullable String staticName;
    /** The text of the annotation as written, for messages. */
    private final String template;
    /** The name's parts in order: literal text (placeholders resolved) or an expression. */
    private final List<Object> parts;
    private final JobOptions options;
    private final boolean returnsOptional;

    private LockedMethod(Method method, String where, @Nullable String staticName, String template, List<Object> parts,
            JobOptions options) {
        this.method = method;
        this.where = where;
        this.staticName = staticName;
        this.template = template;
        this.parts = parts;
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
            List<Object> parts = parts(method, env, raw);
            if (parts.stream().anyMatch(Expression.class::isInstance)) {
                return new LockedMethod(method, where, null, raw, parts, built);
            }
            String name = String.join("", parts.stream().map(String.class::cast).toList());
            Turnstile.checkLockName(name);
            return new LockedMethod(method, where, name, raw, List.of(), built);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("@TurnstileLock on " + where + ": " + e.getMessage(), e);
        }
    }

    /**
     * Splits the annotation's own text into literal parts, whose placeholders are resolved here and
     * whose values stay text, and {@code #{...}} expressions, checked here.
     */
    private static List<Object> parts(Method method, PropertyResolver env, String raw) {
        Expression parsed;
        try {
            parsed = PARSER.parseExpression(raw, ParserContext.TEMPLATE_EXPRESSION);
        } catch (ParseException e) {
            throw new IllegalArgumentException("the lock name '" + raw + "' is not a valid SpEL template ("
                    + e.getMessage() + "): write the dynamic parts as #{...}, e.g. \"invoice-#{#customerId}\"", e);
        }
        Expression[] pieces = parsed instanceof CompositeStringExpression c ? c.getExpressions() : new Expression[] {parsed};
        List<Object> parts = new ArrayList<>(pieces.length);
        for (Expression piece : pieces) {
            if (piece instanceof LiteralExpression literal) {
                String text = literal.getExpressionString();
                int open = text.lastIndexOf("${");
                if (open >= 0 && text.indexOf('}', open) < 0) {
                    throw new IllegalArgumentException("the lock name '" + raw + "' has a #{...} inside a ${...} placeholder: "
                            + "placeholder values are text, never SpEL; write the #{...} outside the placeholder");
                }
                parts.add(placeholders(env, "name", text));
            } else {
                String expression = piece.getExpressionString();
                if (expression.contains("${")) {
                    throw new IllegalArgumentException("the lock name '" + raw + "' has a ${...} placeholder inside #{"
                            + expression + "}: placeholders are not resolved inside #{...} (a property value must not become "
                            + "code); write the placeholder outside it, e.g. \"${app.prefix}-#{#id}\"");
                }
                checkAllowed(raw, ((SpelExpression) piece).getAST());
                checkVariables(method, expression);
                parts.add(piece);
            }
        }
        return parts;
    }

    /** Types and constructors would fail at every call in the read-only context: refuse them at start-up. */
    private static void checkAllowed(String raw, SpelNode node) {
        if (node instanceof TypeReference || node instanceof ConstructorReference) {
            throw new IllegalArgumentException("the lock name '" + raw + "' uses " + node.toStringAST() + ": a name's #{...} "
                    + "may use the arguments (#name, #p0, #a0), #root (the bean), their properties and instance methods and "
                    + "@beans, but no T(...) types or 'new' constructors; compute the value in a bean method and call it");
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            checkAllowed(raw, node.getChild(i));
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

    /** {@return the method as messages name it, e.g. {@code com.acme.Jobs.report()}} */
    /** The lock name when it does not depend on the call (no SpEL), else null. */
    @Nullable String fixedName() {
        return staticName;
    }

    String where() {
        return where;
    }

    JobOptions options() {
        return options;
    }

    /** What a skipped call returns: empty for an {@code Optional} method, else null. */
    @Nullable Object skippedValue() {
        return returnsOptional ? Optional.empty() : null;
    }

    /**
     * The lock name for one call.
     *
     * @throws IllegalArgumentException if a SpEL name fails or evaluates to an invalid name
     */
    String name(@Nullable Object target, Object[] args, @Nullable BeanFactory beanFactory) {
        if (staticName != null) {
            return staticName;
        }
        EvaluationContext ctx = context(target, args, beanFactory);
        StringBuilder b = new StringBuilder();
        for (Object part : parts) {
            if (part instanceof String text) {
                b.append(text);
                continue;
            }
            try {
                Object value = ((Expression) part).getValue(ctx);
                b.append(value == null ? "" : value);
            } catch (EvaluationException e) {
                throw new IllegalArgumentException("@TurnstileLock on " + where + ": the lock name '" + template
                        + "' could not be evaluated (" + e.getMessage() + "); refer to arguments as #name (compiled with "
                        + "-parameters) or #p0, #p1…", e);
            }
        }
        String name = b.toString();
        if (name.isBlank()) {
            throw new IllegalArgumentException("@TurnstileLock on " + where + ": the lock name '" + template
                    + "' evaluated to an empty name for this call: make the expression "
                    + "give a non-empty text for every argument, or check the argument");
        }
        try {
            return Turnstile.checkLockName(name);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("@TurnstileLock on " + where + ": the lock name '" + template
                    + "' evaluated to an invalid name: " + e.getMessage(), e);
        }
    }

    /**
     * Read-only data binding with instance methods (no types, constructors, static methods or
     * assignment), the bean as {@code #root}, the arguments by name and as {@code #p0}/{@code #a0},
     * and {@code @bean} references.
     */
    private EvaluationContext context(@Nullable Object target, Object[] args, @Nullable BeanFactory beanFactory) {
        SimpleEvaluationContext.Builder builder = SimpleEvaluationContext.forReadOnlyDataBinding().withInstanceMethods();
        if (target != null) { // else (no target object) the root stays null, as the builder leaves it
            builder.withRootObject(target);
        }
        SimpleEvaluationContext simple = builder.build();
        String[] names = PARAMETER_NAMES.getParameterNames(method);
        for (int i = 0; i < args.length; i++) {
            simple.setVariable("p" + i, args[i]);
            simple.setVariable("a" + i, args[i]);
            if (names != null && i < names.length) {
                simple.setVariable(names[i], args[i]);
            }
        }
        return new NameEvaluationContext(simple, beanFactory != null ? new BeanFactoryResolver(beanFactory) : null);
    }
}
