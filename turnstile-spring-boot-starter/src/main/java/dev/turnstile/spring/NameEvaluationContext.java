package dev.turnstile.spring;

import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.ConstructorResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.IndexAccessor;
import org.springframework.expression.MethodResolver;
import org.springframework.expression.OperatorOverloader;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.TypeComparator;
import org.springframework.expression.TypeConverter;
import org.springframework.expression.TypeLocator;
import org.springframework.expression.TypedValue;
import org.springframework.expression.spel.support.SimpleEvaluationContext;

/**
 * A {@link SimpleEvaluationContext} (read-only data binding, no types, no constructors) that also
 * resolves {@code @bean} references, which lock names are documented to allow. SimpleEvaluationContext
 * is final and has no bean resolver, hence the delegation.
 */
final class NameEvaluationContext implements EvaluationContext {
    private final SimpleEvaluationContext delegate;
    /** Resolves {@code @bean} references; null without a bean factory. */
    private final @Nullable BeanResolver beans;

    NameEvaluationContext(SimpleEvaluationContext delegate, @Nullable BeanResolver beans) {
        this.delegate = delegate;
        this.beans = beans;
    }

    @Override
    public TypedValue getRootObject() {
        return delegate.getRootObject();
    }

    @Override
    public List<PropertyAccessor> getPropertyAccessors() {
        return delegate.getPropertyAccessors();
    }

    @Override
    public List<IndexAccessor> getIndexAccessors() {
        return delegate.getIndexAccessors();
    }

    @Override
    public List<ConstructorResolver> getConstructorResolvers() {
        return delegate.getConstructorResolvers();
    }

    @Override
    public List<MethodResolver> getMethodResolvers() {
        return delegate.getMethodResolvers();
    }

    @Override
    public @Nullable BeanResolver getBeanResolver() {
        return beans;
    }

    @Override
    public TypeLocator getTypeLocator() {
        return delegate.getTypeLocator();
    }

    @Override
    public TypeConverter getTypeConverter() {
        return delegate.getTypeConverter();
    }

    @Override
    public TypeComparator getTypeComparator() {
        return delegate.getTypeComparator();
    }

    @Override
    public OperatorOverloader getOperatorOverloader() {
        return delegate.getOperatorOverloader();
    }

    @Override
    public TypedValue assignVariable(String name, Supplier<TypedValue> valueSupplier) {
        return delegate.assignVariable(name, valueSupplier);
    }

    @Override
    public void setVariable(String name, @Nullable Object value) {
        delegate.setVariable(name, value);
    }

    @Override
    public @Nullable Object lookupVariable(String name) {
        return delegate.lookupVariable(name);
    }

    @Override
    public boolean isAssignmentEnabled() {
        return delegate.isAssignmentEnabled();
    }
}
