package dev.turnstile.spring;

import dev.turnstile.Turnstile;
import dev.turnstile.console.Console;
import dev.turnstile.claim.TaskClaimer;
import dev.turnstile.console.JobHistory;
import dev.turnstile.leader.Leadership;
import dev.turnstile.spring.console.ConsoleServlet;
import dev.turnstile.spring.console.TurnstileConsoleProperties;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

/**
 * Serves the Turnstile console ({@code turnstile-console}) at {@code turnstile.console.path} when
 * {@code turnstile.console.enabled=true} in a servlet application. It brings no login of its own:
 * the application's Spring Security decides who sees the pages and who may post a release, and
 * its CSRF protection guards the form. Force-release ({@code turnstile.console.actions-enabled})
 * refuses to start without Spring Security.
 */
@AutoConfiguration(after = TurnstileAutoConfiguration.class)
@ConditionalOnProperty(prefix = "turnstile.console", name = "enabled", havingValue = "true")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = {"jakarta.servlet.http.HttpServlet", "dev.turnstile.console.Console"})
@ConditionalOnBean(Turnstile.class)
@EnableConfigurationProperties(TurnstileConsoleProperties.class)
public class TurnstileConsoleAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public TurnstileConsoleAutoConfiguration() {}

    /**
     * What the application's jobs did, for the jobs page: registered on the auto-configured
     * {@code JobRunner} as a {@link dev.turnstile.job.JobListener}.
     *
     * @return the history
     */
    @Bean
    @ConditionalOnMissingBean
    public JobHistory turnstileJobHistory() {
        return new JobHistory();
    }

    @Bean
    ServletRegistrationBean<ConsoleServlet> turnstileConsoleServlet(Turnstile turnstile, TurnstileConsoleProperties properties,
            JobHistory jobs, ObjectProvider<Leadership> leaderships, ObjectProvider<TaskClaimer> claimers,
            ObjectProvider<org.springframework.scheduling.config.ScheduledTaskHolder> scheduled,
            ObjectProvider<TurnstileLockPostProcessor> lockedMethods) {
        String path = checkPath(properties.getPath());
        checkActionsPossible(properties.isActionsEnabled(), path, TurnstileConsoleAutoConfiguration.class.getClassLoader());
        Console console;
        try {
            Console.Builder builder = Console.builder(turnstile);
            if (properties.getStuckAfter() != null) {
                builder.stuckAfter(properties.getStuckAfter());
            }
            console = builder
                    .actionsEnabled(properties.isActionsEnabled(), "set turnstile.console.actions-enabled=true "
                            + "(with Spring Security securing " + path + "/**) to enable force-release.")
                    .maxRows(properties.getMaxRows())
                    .historySize(properties.getHistorySize())
                    .jobs(jobs)
                    .leaderships(() -> leaderships.orderedStream().toList())
                    .claimers(() -> claimers.orderedStream().toList())
                    .nextTicks(new ScheduledJobTicks(scheduled, lockedMethods))
                    .build();
        } catch (IllegalArgumentException e) {
            throw new TurnstileStartupException("turnstile.console: " + e.getMessage(),
                    "set turnstile.console.max-rows and turnstile.console.history-size within 1 to 100000, and "
                            + "turnstile.console.stuck-after within 1s to 366d", e);
        }
        ServletRegistrationBean<ConsoleServlet> registration = new ServletRegistrationBean<>(new ConsoleServlet(console), path + "/*");
        registration.setName("turnstileConsole");
        return registration;
    }

    /** Force-release without Spring Security would have no login and no CSRF protection: refused at start. */
    static void checkActionsPossible(boolean actionsEnabled, String path, ClassLoader loader) {
        if (actionsEnabled && !ClassUtils.isPresent("org.springframework.security.web.csrf.CsrfToken", loader)) {
            throw new TurnstileStartupException("turnstile.console.actions-enabled=true needs Spring Security: the console "
                    + "has no login of its own, and its release form is guarded by Spring Security's CSRF protection",
                    "add spring-boot-starter-security and secure " + path + "/**, or set turnstile.console.actions-enabled=false",
                    null);
        }
    }

    /** {@code /a/b}: absolute, no trailing slash, no wildcards or odd characters a servlet mapping would take otherwise. */
    static String checkPath(String path) {
        if (path == null || !path.matches("(/[A-Za-z0-9._~-]+)+")) {
            throw new TurnstileStartupException("turnstile.console.path '" + path + "' is not a path like /turnstile-console",
                    "give one or more /segments of letters, digits, '.', '_', '~' or '-', with no trailing slash", null);
        }
        if (path.contains("/./") || path.contains("/../") || path.endsWith("/.") || path.endsWith("/..")) {
            throw new TurnstileStartupException("turnstile.console.path '" + path + "' has a '.' or '..' segment",
                    "give a plain path, e.g. /turnstile-console", null);
        }
        return path;
    }
}
