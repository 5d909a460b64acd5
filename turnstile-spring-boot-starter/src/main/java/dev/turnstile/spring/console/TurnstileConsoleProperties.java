package dev.turnstile.spring.console;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code turnstile.console.*} properties: the console's pages inside the application. */
@ConfigurationProperties("turnstile.console")
public class TurnstileConsoleProperties {

    /** Whether to serve the console's pages. Off unless set. */
    private boolean enabled;

    /**
     * The path the console is served under, within the context path, on the application's main
     * server port. Secure it in the application's own rules: Spring Boot's EndpointRequest matchers
     * do not match it, even under the actuator's base path.
     */
    private String path = "/turnstile-console";

    /**
     * Whether the console offers force-release. Needs Spring Security on the class path: its CSRF
     * protection guards the release form, and its rules decide who may post it.
     */
    private boolean actionsEnabled;

    /** The most rows the locks page lays out; more are counted and left to its filter. */
    private int maxRows = 500;

    /** How many forced releases the history page keeps (the log keeps them all). */
    private int historySize = 200;

    /**
     * How long a claimed or overdue task must go without progress to be listed as stuck on the
     * claim tables page. Default: ten of its claimer's lock timeouts, at least a minute.
     */
    private java.time.@Nullable Duration stuckAfter;

    /** {@return whether the console is served} */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets whether the console is served.
     *
     * @param enabled whether the console is served
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** {@return the path the console is served under} */
    public String getPath() {
        return path;
    }

    /**
     * Sets the path the console is served under.
     *
     * @param path e.g. {@code /turnstile-console}
     */
    public void setPath(String path) {
        this.path = path;
    }

    /** {@return whether force-release is offered} */
    public boolean isActionsEnabled() {
        return actionsEnabled;
    }

    /**
     * Sets whether force-release is offered.
     *
     * @param actionsEnabled whether force-release is offered
     */
    public void setActionsEnabled(boolean actionsEnabled) {
        this.actionsEnabled = actionsEnabled;
    }

    /** {@return the most rows the locks page lays out} */
    public int getMaxRows() {
        return maxRows;
    }

    /**
     * Sets the most rows the locks page lays out.
     *
     * @param maxRows 1 to 100,000
     */
    public void setMaxRows(int maxRows) {
        this.maxRows = maxRows;
    }

    /** {@return how many forced releases the history page keeps} */
    public int getHistorySize() {
        return historySize;
    }

    /**
     * Sets how many forced releases the history page keeps.
     *
     * @param historySize 1 to 100,000
     */
    public void setHistorySize(int historySize) {
        this.historySize = historySize;
    }

    /** {@return how long without progress makes a task stuck, or null for the default} */
    public java.time.@Nullable Duration getStuckAfter() {
        return stuckAfter;
    }

    /**
     * Sets how long a claimed or overdue task must go without progress to be listed as stuck.
     *
     * @param stuckAfter 1 second to 366 days, or null for ten lock timeouts
     */
    public void setStuckAfter(java.time.@Nullable Duration stuckAfter) {
        this.stuckAfter = stuckAfter;
    }
}
