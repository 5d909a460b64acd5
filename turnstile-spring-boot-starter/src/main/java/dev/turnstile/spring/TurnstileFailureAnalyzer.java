package dev.turnstile.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a start-up failure of the lock store (a missing table, an unreachable store with
 * fail-fast, a bad store URL) into Spring Boot's "APPLICATION FAILED TO START" report: what is
 * wrong and the setting or DDL that fixes it, instead of a cause five levels down a bean creation
 * stack trace. Registered in {@code META-INF/spring.factories}.
 */
final class TurnstileFailureAnalyzer extends AbstractFailureAnalyzer<TurnstileStartupException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, TurnstileStartupException cause) {
        return new FailureAnalysis("Turnstile: " + cause.getMessage(), cause.action(), cause);
    }
}
