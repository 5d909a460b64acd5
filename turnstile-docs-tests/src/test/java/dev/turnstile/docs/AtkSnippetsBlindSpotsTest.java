package dev.turnstile.docs;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * atk: SnippetsTest must fail when a page has a Java block that does not compile. Each case writes
 * one such page for the time of the test (then deletes it) and runs SnippetsTest's checks on the
 * tree: a case that passes them anyway is a blind spot. GitHub renders every one of these blocks as
 * Java (its fence info string is case-insensitive, takes the first word, and ~~~ is a fence too).
 */
class AtkSnippetsBlindSpotsTest {
    private static final String BROKEN = "import java.util.List;\n\npublic class AtkBroken {\n"
            + "    List<String> names = List.of(1, 2);  this does not compile\n}\n";

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "upper-case info string ```Java|docs/atk-upper.md|```Java\\n@@```\\n",
        "tilde fence ~~~java|docs/atk-tilde.md|~~~java\\n@@~~~\\n",
        "info string with a trailing space|docs/atk-space.md|```java \\n@@```\\n",
        "info string with attributes|docs/atk-attr.md|```java title=\"AtkBroken.java\"\\n@@```\\n",
        "CRLF line endings|docs/atk-crlf.md|CRLF",
        "a page in a subfolder of docs/|docs/atk-sub/page.md|```java\\n@@```\\n",
        "a fence in a list item|docs/atk-list.md|1. Paste this:\\n\\n   ```java\\n@@   ```\\n",
        "an example README's Java block written ```Java|examples/atk-example/README.md|```Java\\n@@```\\n",
    })
    void aBrokenJavaBlockFailsTheSnippetChecks(String what, String page, String template) throws Exception {
        Path root = Path.of("..");
        Path file = root.resolve(page);
        String text;
        if (template.equals("CRLF")) {
            text = ("# atk\n\n```java\n" + BROKEN + "```\n").replace("\n", "\r\n");
        } else {
            String body = template.contains("   ```java") ? BROKEN.replaceAll("(?m)^", "   ") : BROKEN;
            text = "# atk\n\n" + template.replace("\\n", "\n").replace("@@", body);
        }
        Path created = firstMissing(file);
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
        try {
            assertThatThrownBy(() -> {
                SnippetsTest t = new SnippetsTest();
                t.dir = Files.createTempDirectory("atk-snippets");
                t.everyJavaSnippetIsCompleteAndCompiles();
                t.everyExampleExcerptIsInItsFile();
            }).as("SnippetsTest with a broken Java block (%s) in %s", what, page).isInstanceOf(AssertionError.class);
        } finally {
            if (created != null) {
                try (Stream<Path> s = Files.walk(created)) {
                    s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    /** The outermost of file and its folders that does not exist yet (to delete after). */
    private static Path firstMissing(Path file) {
        Path missing = null;
        for (Path p = file; p != null && !Files.exists(p); p = p.getParent()) {
            missing = p;
        }
        return missing;
    }
}
