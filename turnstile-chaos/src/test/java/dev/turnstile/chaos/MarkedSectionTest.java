package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MarkedSectionTest {
    static final String CLI = "<!-- cli-chaos:start -->\n## CLI\n| a |\n<!-- cli-chaos:end -->\n";

    @Test
    void theLongRunGoesBeforeTheCliSectionAndReplacesOnlyItself(@TempDir Path dir) throws IOException {
        Path doc = dir.resolve("reliability.md");
        Files.writeString(doc, "# Short\n\n| short table |\n\n" + CLI);
        MarkedSection.LONG.write(doc, "## Long v1\n");
        assertThat(Files.readString(doc)).isEqualTo("# Short\n\n| short table |\n\n<!-- long-run:start -->\n## Long v1\n"
                + "<!-- long-run:end -->\n\n" + CLI);
        MarkedSection.LONG.write(doc, "## Long v2\n");
        assertThat(Files.readString(doc)).contains("## Long v2").doesNotContain("v1").startsWith("# Short\n").endsWith(CLI);
        MarkedSection.CLI.write(doc, "## CLI v2\n");
        assertThat(Files.readString(doc)).contains("## Long v2", "## CLI v2", "| short table |").doesNotContain("| a |");
    }

    @Test
    void theShortRunRewritesEverythingButTheMarkedSections(@TempDir Path dir) throws IOException {
        Path doc = dir.resolve("reliability.md");
        Files.writeString(doc, "# Old short\n\n<!-- long-run:start -->\n## Long\n<!-- long-run:end -->\n\nhand-written\n\n" + CLI);
        Report.write(doc, List.of(), "cmd", "short", ChaosConfig.shortRun(dir));
        String text = Files.readString(doc);
        assertThat(text).doesNotContain("# Old short").contains("# Turnstile reliability", "## Long", "## CLI");
        assertThat(text.indexOf("## Long")).isLessThan(text.indexOf("## CLI"));
        assertThat(dir.resolve("reliability.json")).exists();
    }

    @Test
    void aDocumentWithoutSectionsGetsTheSectionAtItsEnd(@TempDir Path dir) throws IOException {
        Path doc = dir.resolve("r.md");
        Files.writeString(doc, "text\n");
        MarkedSection.LONG.write(doc, "long");
        assertThat(Files.readString(doc)).isEqualTo("text\n\n<!-- long-run:start -->\nlong\n<!-- long-run:end -->\n");
        assertThat(MarkedSection.LONG.in(doc)).startsWith("<!-- long-run:start -->").endsWith("<!-- long-run:end -->\n");
    }

    @Test
    void notesThatRepeatEachRoundAreShownOnce() {
        assertThat(Report.collapse(List.of("first acquire 12 ms after the store came back", "x",
                "first acquire 7 ms after the store came back", "first acquire 9.5 ms after the store came back")))
                .containsExactly("first acquire 12 ms after the store came back (and 2 more like it)", "x");
    }
}
