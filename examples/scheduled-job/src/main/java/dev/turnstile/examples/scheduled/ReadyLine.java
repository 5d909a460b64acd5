package dev.turnstile.examples.scheduled;

import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/** Prints {@code READY <instance> <http port>} once the app is up, for people and for the three-instance test. */
@Component
class ReadyLine {
    private final TickJob job;

    ReadyLine(TickJob job) {
        this.job = job;
    }

    @EventListener
    void ready(ApplicationReadyEvent event) {
        int port = event.getApplicationContext() instanceof WebServerApplicationContext web ? web.getWebServer().getPort() : -1;
        System.out.println("READY " + job.instance() + " " + port);
        System.out.flush();
    }
}
