package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every Java block of the README that starts with its imports is a complete source file, and it
 * compiles against the library as built: a snippet that a user pastes must not fail on a missing
 * import or a renamed method.
 */
class ReadmeSnippetsTest {
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern CLASS_NAME = Pattern.compile("public (?:final )?(?:class|record|interface) (\\w+)");

    @TempDir Path dir;

    @Test
    void everyCompleteSnippetCompiles() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        List<String> files = new ArrayList<>();
        Matcher m = JAVA_BLOCK.matcher(readme);
        while (m.find()) {
            String code = m.group(1);
            if (!code.startsWith("import ") && !code.startsWith("package ")) {
                continue; // a fragment, shown in the text around it
            }
            Matcher name = CLASS_NAME.matcher(code);
            assertThat(name.find()).as("a complete snippet declares a public class:%n%s", code).isTrue();
            Path file = dir.resolve(name.group(1) + ".java");
            Files.writeString(file, code);
            files.add(file.toString());
        }
        assertThat(files).as("the README's complete snippets").isNotEmpty();
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        List<String> args = new ArrayList<>(List.of("-d", dir.resolve("classes").toString(), "-cp",
                System.getProperty("java.class.path"), "--release", "17", "-proc:none"));
        args.addAll(files);
        int code = javac.run(null, null, null, args.toArray(String[]::new));
        assertThat(code).as("javac on %s", files).isZero();
    }
}
