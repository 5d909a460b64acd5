package dev.turnstile.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.spi.StoreCapability;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * A store declares a capability by implementing its interface, and the contract runs that
 * capability's group for it: so every capability of the SPI must have a group, or a store could
 * claim it untested.
 */
class CapabilityGroupsTest {

    @Test
    void everyCapabilityOfTheSpiHasAContractGroup() throws Exception {
        Set<Class<?>> withGroups = new HashSet<>(LockStoreContract.CAPABILITY_GROUPS.keySet());
        assertThat(withGroups).as("capabilities with a group in LockStoreContract")
                .containsExactlyInAnyOrderElementsOf(capabilitiesOfTheSpi());
        for (Class<?> group : LockStoreContract.CAPABILITY_GROUPS.values()) {
            assertThat(group.getEnclosingClass()).isEqualTo(LockStoreContract.class);
            assertThat(group.isAnnotationPresent(Nested.class)).as("%s runs with the contract", group.getSimpleName()).isTrue();
        }
    }

    /** Every interface in dev.turnstile.spi that extends StoreCapability, read from where the SPI's classes are. */
    private static Set<Class<?>> capabilitiesOfTheSpi() throws Exception {
        URI where = StoreCapability.class.getProtectionDomain().getCodeSource().getLocation().toURI();
        Path root = Path.of(where);
        Set<Class<?>> found = new HashSet<>();
        if (Files.isDirectory(root)) {
            collect(root.resolve("dev/turnstile/spi"), found);
        } else {
            try (FileSystem jar = FileSystems.newFileSystem(root, Map.of())) {
                collect(jar.getPath("dev/turnstile/spi"), found);
            }
        }
        assertThat(found).as("capabilities found beside %s", where).isNotEmpty();
        return found;
    }

    private static void collect(Path spi, Set<Class<?>> found) throws Exception {
        try (Stream<Path> files = Files.list(spi)) {
            for (Path file : files.toList()) {
                String simple = file.getFileName().toString();
                if (!simple.endsWith(".class") || simple.contains("$")) {
                    continue;
                }
                Class<?> type = Class.forName("dev.turnstile.spi." + simple.substring(0, simple.length() - ".class".length()));
                if (type.isInterface() && StoreCapability.class.isAssignableFrom(type) && type != StoreCapability.class) {
                    found.add(type);
                }
            }
        }
    }
}
