package dev.turnstile.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The starter ships the configuration metadata that IDEs complete {@code turnstile.*} from,
 * generated from {@link TurnstileProperties} and its Javadoc. (Run by the Boot 3 module against
 * the starter's jar.)
 */
class ConfigurationMetadataTest {

    @Test
    void metadataIsGeneratedWithDescriptionsAndDefaults() throws Exception {
        List<URL> all = Collections.list(getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json"));
        URL ours = all.stream().filter(u -> u.toString().contains("turnstile-spring-boot-starter")).findFirst().orElseThrow(
                () -> new AssertionError("no META-INF/spring-configuration-metadata.json from the starter among " + all));
        String json;
        try (InputStream in = ours.openStream()) {
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(json).contains("\"name\": \"turnstile.store.url\"", "\"name\": \"turnstile.defaults.lock-at-most-for\"",
                "\"name\": \"turnstile.defaults.lock-at-least-for\"", "\"name\": \"turnstile.jdbc.create-table\"",
                "\"name\": \"turnstile.jdbc.flyway.enabled\"", "\"name\": \"turnstile.jdbc.flyway.history-table\"",
                "\"name\": \"turnstile.shutdown.await-running\"", "Store URL, such as jdbc:postgresql",
                "\"defaultValue\": \"30s\"");
    }
}
