package dev.turnstile.spring;

import dev.turnstile.FenceGate;
import dev.turnstile.jdbc.SqlFences;
import dev.turnstile.spring.fence.FencedRequestFilter;
import dev.turnstile.spring.fence.TurnstileFencingProperties;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashSet;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The receiving side of fenced HTTP writes, on when {@code turnstile.fencing.http.enabled=true} in
 * a servlet web application: a {@link FencedRequestFilter} over the application's
 * {@link FenceGate} bean, or else over {@code SqlFences.gate} on its DataSource (the fence table
 * created if missing). It needs no lock store: the service that receives fenced writes need not
 * take locks itself.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration", // Boot 4
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration", // Boot 3
})
@ConditionalOnProperty(prefix = "turnstile.fencing.http", name = "enabled", havingValue = "true")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = "jakarta.servlet.Filter")
@EnableConfigurationProperties(TurnstileFencingProperties.class)
public class TurnstileFencingAutoConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(TurnstileFencingAutoConfiguration.class);

    /** Creates the auto-configuration; Spring calls it. */
    public TurnstileFencingAutoConfiguration() {}

    /**
     * The filter.
     *
     * @param props the {@code turnstile.fencing.http} properties
     * @param gates the application's gate, or the one made from its DataSource
     * @return the filter, which Spring Boot registers for every request (it picks its own paths)
     */
    @Bean
    @ConditionalOnMissingBean
    public FencedRequestFilter turnstileFencedRequestFilter(TurnstileFencingProperties props, ObjectProvider<FenceGate> gates) {
        FenceGate gate = gates.getIfUnique();
        if (gate == null) {
            throw new TurnstileStartupException("turnstile.fencing.http.enabled=true, but there is nowhere to record fences: "
                    + "no single FenceGate bean and no single DataSource with turnstile-jdbc on the class path",
                    "define a DataSource (and add dev.turnstile:turnstile-jdbc), or a FenceGate bean, e.g. "
                    + "RedisFences.over(connection.sync()).gate() from turnstile-redis", null);
        }
        try {
            return new FencedRequestFilter(gate, props.getPaths(), new LinkedHashSet<>(props.getMethods()));
        } catch (IllegalArgumentException e) {
            throw new TurnstileStartupException(e.getMessage() == null ? "bad turnstile.fencing.http setting" : e.getMessage(),
                    "fix the turnstile.fencing.http property as the message says", e);
        }
    }

    /** The gate over the application's DataSource, unless it defines its own. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.turnstile.jdbc.SqlFences")
    @ConditionalOnSingleCandidate(DataSource.class)
    static class FromDataSource {

        @Bean
        @ConditionalOnMissingBean(FenceGate.class)
        FenceGate turnstileFenceGate(DataSource dataSource, TurnstileFencingProperties props) {
            SqlFences fences;
            try {
                fences = SqlFences.create().withTable(props.getTable());
            } catch (IllegalArgumentException e) {
                throw new TurnstileStartupException("turnstile.fencing.http.table: " + e.getMessage(),
                        "fix turnstile.fencing.http.table as the message says", e);
            }
            try (Connection c = dataSource.getConnection()) {
                fences.createTable(c);
            } catch (SQLException | RuntimeException e) {
                LOG.warn("cannot create the fence table {} now ({}); fenced requests are refused with 503 until it exists",
                        props.getTable(), e.getMessage());
            }
            return fences.gate(dataSource);
        }
    }
}
