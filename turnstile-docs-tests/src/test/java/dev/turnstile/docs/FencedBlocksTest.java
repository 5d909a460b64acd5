package dev.turnstile.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The snippet checks find every Java block a reader sees as Java: GitHub takes the info string's
 * first word without regard to case, ~~~ is a fence too, a fence may be indented in a list item,
 * and a page may have CR LF line ends (found by an attack on the checks: each of these was skipped).
 */
class FencedBlocksTest {
    private static final String CODE = "import java.util.List;\n\npublic class A {\n}\n";

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "plain|```java\\n@@```\\n",
        "upper-case info string|```Java\\n@@```\\n",
        "tilde fence|~~~java\\n@@~~~\\n",
        "info string with a trailing space|```java \\n@@```\\n",
        "info string with attributes|```java title=\"A.java\"\\n@@```\\n",
        "attributes in braces|```java{.numberLines}\\n@@```\\n",
        "a longer fence|````java\\n@@````\\n",
        "a fence in a list item|1. Paste this:\\n\\n   ```java\\n@@   ```\\n",
        "CRLF line ends|CRLF",
    })
    void aJavaBlockIsFoundWithItsCode(String what, String template) {
        String page;
        if (template.equals("CRLF")) {
            page = ("# t\n\n```java\n" + CODE + "```\n").replace("\n", "\r\n");
        } else {
            String body = template.contains("   ```java") ? CODE.replaceAll("(?m)^(?=.)", "   ") : CODE;
            page = "# t\n\nSome text.\n\n" + template.replace("\\n", "\n").replace("@@", body);
        }
        List<SnippetsTest.Block> blocks = SnippetsTest.blocks(page);
        assertThat(blocks).as(what).hasSize(1);
        assertThat(blocks.get(0).language()).isEqualTo("java");
        assertThat(blocks.get(0).code()).isEqualTo(CODE);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "a shorter closing fence does not close|````java\\na\\n```\\nb\\n````\\n|a\\n```\\nb\\n",
        "the other fence character does not close|~~~java\\na\\n```\\nb\\n~~~\\n|a\\n```\\nb\\n",
        "an unclosed block runs to the end|```java\\na\\n|a\\n\\n",
    })
    void blocksCloseAsCommonMarkSays(String what, String page, String code) {
        List<SnippetsTest.Block> blocks = SnippetsTest.blocks(page.replace("\\n", "\n"));
        assertThat(blocks).as(what).hasSize(1);
        assertThat(blocks.get(0).code()).isEqualTo(code.replace("\\n", "\n"));
    }
}
