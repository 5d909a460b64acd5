package dev.turnstile.examples.scheduled;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/** What a running instance shows over HTTP: its locks, its health and Turnstile's meters. */
final class ActuatorCheck {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    private ActuatorCheck() {}

    static JsonNode get(int port, String path) {
        HttpResponse<String> r;
        try {
            r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException("GET " + path + " on port " + port, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        assertThat(r.statusCode()).as("GET %s: %s", path, r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    /**
     * On an instance that has run the job: the store is healthy, the endpoint shows the tick lock
     * (held for 500 ms of every second, so asked until seen), and the meters exist.
     */
    static void check(int port, String lock) {
        JsonNode health = get(port, "/actuator/health");
        assertThat(health.path("components").path("turnstile").path("status").asString()).as("health: %s", health).isEqualTo("UP");

        List<String> seen = new ArrayList<>();
        long deadline = System.currentTimeMillis() + 10_000;
        while (System.currentTimeMillis() < deadline) {
            JsonNode locks = get(port, "/actuator/turnstile");
            seen.add(locks.toString());
            if (locks.toString().contains(lock)) {
                break;
            }
            try {
                Thread.sleep(97);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
        assertThat(seen.get(seen.size() - 1)).as("/actuator/turnstile never listed %s: %s", lock, seen).contains(lock);

        JsonNode names = get(port, "/actuator/metrics").path("names");
        List<String> meters = new ArrayList<>();
        names.forEach(n -> meters.add(n.asString()));
        assertThat(meters).as("meters").contains("turnstile.acquire", "turnstile.leases.held", "turnstile.job");
        JsonNode acquire = get(port, "/actuator/metrics/turnstile.acquire?tag=lock:" + lock);
        assertThat(acquire.path("measurements").get(0).path("value").asDouble()).as("acquires of %s: %s", lock, acquire).isPositive();
    }
}
