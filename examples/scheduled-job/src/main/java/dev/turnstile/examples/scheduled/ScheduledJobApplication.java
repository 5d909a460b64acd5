package dev.turnstile.examples.scheduled;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A job that ticks every second on every instance of this app and runs once per tick across all of
 * them, under {@code @TurnstileLock}. Run three copies on one store to see it (README.md).
 */
@SpringBootApplication
@EnableScheduling
public class ScheduledJobApplication {

    /**
     * Starts the app.
     *
     * @param args Spring Boot arguments, e.g. {@code --example.instance-id=A --server.port=8081}
     */
    public static void main(String[] args) {
        SpringApplication.run(ScheduledJobApplication.class, args);
    }
}
