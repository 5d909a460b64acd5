package dev.turnstile.spring;

import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.springframework.boot.autoconfigure.AutoConfigurations;

/**
 * What differs between the Spring Boot lines these tests run on (4.1 in this module, 3.5 in
 * turnstile-spring-boot3-tests): classes that moved are found by name.
 */
final class Boot {
    private Boot() {}

    static Class<?> firstPresent(String... names) {
        for (String n : names) {
            try {
                return Class.forName(n, false, Boot.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                // try the next line's name
            }
        }
        throw new IllegalStateException("none of " + String.join(", ", names) + " is on the class path");
    }

    static AutoConfigurations dataSource() {
        return AutoConfigurations.of(firstPresent("org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
                "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration"));
    }

    static AutoConfigurations flyway() {
        return AutoConfigurations.of(firstPresent("org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration",
                "org.springframework.boot.autoconfigure.flyway.FlywayAutoConfiguration"));
    }

    static AutoConfigurations liquibase() {
        return AutoConfigurations.of(firstPresent("org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration",
                "org.springframework.boot.autoconfigure.liquibase.LiquibaseAutoConfiguration"));
    }

    static AutoConfigurations redis() {
        return AutoConfigurations.of(firstPresent("org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
                "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration"));
    }

    static AutoConfigurations turnstile() {
        // The Boot 3 health auto-configuration by name: its annotations name Boot 3 classes.
        return AutoConfigurations.of(TurnstileAutoConfiguration.class,
                dev.turnstile.spring.actuate.TurnstileActuatorAutoConfiguration.class,
                firstPresent("dev.turnstile.spring.boot3.TurnstileBoot3HealthAutoConfiguration"));
    }

    /** A fresh SQLite file store URL. */
    static String sqliteUrl() {
        try {
            Path dir = Files.createTempDirectory("turnstile-starter");
            dir.toFile().deleteOnExit();
            return "jdbc:sqlite:" + dir.resolve("locks.db");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** The status code of a HealthIndicator of either line ({@code health().getStatus().getCode()}). */
    static String healthStatus(Object indicator) {
        Object health = call(indicator, "health");
        return (String) call(call(health, "getStatus"), "getCode");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> healthDetails(Object indicator) {
        return (Map<String, Object>) call(call(indicator, "health"), "getDetails");
    }

    private static Object call(Object target, String method) {
        try {
            Method m = target.getClass().getMethod(method);
            m.setAccessible(true);
            return m.invoke(target);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
