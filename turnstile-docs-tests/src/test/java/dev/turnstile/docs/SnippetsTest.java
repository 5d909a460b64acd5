package dev.turnstile.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The snippets of the README and of {@code docs/} are what a new user pastes first. Every Java
 * block is a complete source file (imports, a public type) that compiles against the modules as
 * built, and every Maven block names modules this build publishes, at this build's version.
 */
class SnippetsTest {
    /** An opening or closing fence: up to three spaces, then three or more backticks or tildes, then the info string. */
    private static final Pattern FENCE = Pattern.compile("^( {0,3})(`{3,}|~{3,})(.*)$");
    private static final Pattern TYPE_NAME =
            Pattern.compile("^public (?:final |abstract )?(?:class|record|interface|enum) (\\w+)", Pattern.MULTILINE);
    private static final Path ROOT = Path.of("..");

    @TempDir Path dir;

    @Test
    void everyJavaSnippetIsCompleteAndCompiles() throws IOException {
        Map<String, List<String>> snippets = blocksIn("java");
        assertThat(snippets).as("Java snippets in README.md").containsKey("README.md");
        List<String> problems = new ArrayList<>();
        // One javac run per batch of files with distinct type names (a page may show a class before and after).
        List<Map<String, String>> batches = new ArrayList<>();
        snippets.forEach((doc, codes) -> {
            for (String code : codes) {
                Matcher name = TYPE_NAME.matcher(code);
                if (!code.startsWith("import ") && !code.startsWith("package ") || !name.find()) {
                    problems.add(doc + ": a snippet is not a complete source file (it must start with its imports"
                            + " and declare a public type):\n" + code);
                    continue;
                }
                String file = name.group(1) + ".java";
                Map<String, String> batch = batches.stream().filter(b -> !b.containsKey(file)).findFirst()
                        .orElseGet(() -> {
                            Map<String, String> b = new LinkedHashMap<>();
                            batches.add(b);
                            return b;
                        });
                batch.put(file, "// " + doc + "\n" + code);
            }
        });
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        for (int i = 0; i < batches.size(); i++) {
            Path src = Files.createDirectories(dir.resolve("src" + i));
            List<String> options = List.of("-d", dir.resolve("classes" + i).toString(), "-cp",
                    System.getProperty("java.class.path"), "--release", "17", "-proc:none", "-Xlint:none");
            List<String> files = new ArrayList<>();
            for (Map.Entry<String, String> e : batches.get(i).entrySet()) {
                Path file = src.resolve(e.getKey());
                Files.writeString(file, e.getValue());
                files.add(file.toString());
            }
            StringWriter out = new StringWriter();
            boolean compiled = javac.getTask(out, null, null, options, null,
                    javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)
                            .getJavaFileObjectsFromStrings(files)).call();
            if (!compiled) {
                problems.add("javac failed:\n" + out);
            }
        }
        assertThat(problems).as("snippets that do not paste").isEmpty();
    }

    /**
     * An example's README shows parts of the example's own code: each such block names its file
     * just before it, and every line of code in it is a line of that file, so the two cannot drift.
     */
    @Test
    void everyExampleExcerptIsInItsFile() throws IOException {
        Pattern source = Pattern.compile("`(src/[^`]+\\.java)`[^`]*$");
        List<String> problems = new ArrayList<>();
        int seen = 0;
        try (Stream<Path> examples = Files.list(ROOT.resolve("examples"))) {
            for (Path example : examples.sorted().toList()) {
                Path readme = example.resolve("README.md");
                if (!Files.exists(readme)) {
                    continue;
                }
                for (Block block : blocks(Files.readString(readme))) {
                    if (!block.language().equals("java")) {
                        continue;
                    }
                    Matcher named = source.matcher(block.before().strip());
                    if (!named.find() || !Files.exists(example.resolve(named.group(1)))) {
                        problems.add(readme + ": a Java block that does not name, just before it, the file of the example "
                                + "it comes from (`src/….java`):\n" + block.code());
                        continue;
                    }
                    seen++;
                    Set<String> lines = new HashSet<>(Files.readAllLines(example.resolve(named.group(1))).stream()
                            .map(SnippetsTest::code).toList());
                    for (String line : block.code().split("\n")) {
                        if (!code(line).isEmpty() && !lines.contains(code(line))) {
                            problems.add(readme + ": not in " + named.group(1) + ": " + line.trim());
                        }
                    }
                }
            }
        }
        assertThat(seen).as("excerpts in the examples' READMEs").isPositive();
        assertThat(problems).isEmpty();
    }

    /** A line of Java without its indentation and its trailing comment. */
    private static String code(String line) {
        int comment = line.indexOf("// ");
        return (comment < 0 ? line : line.substring(0, comment)).trim();
    }

    @Test
    void everyMavenSnippetNamesAPublishedModuleAtThisVersion() throws Exception {
        String version = System.getProperty("turnstile.version");
        assertThat(version).as("turnstile.version, set by the pom").isNotBlank();
        Set<String> published = publishedModules();
        List<String> problems = new ArrayList<>();
        int seen = 0;
        for (Map.Entry<String, List<String>> e : blocksIn("xml").entrySet()) {
            for (String xml : e.getValue()) {
                if (!xml.contains("<dependency>")) {
                    continue;
                }
                NodeList deps = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                        .parse(new ByteArrayInputStream(("<root>" + xml + "</root>").getBytes(StandardCharsets.UTF_8)))
                        .getElementsByTagName("dependency");
                for (int i = 0; i < deps.getLength(); i++) {
                    Element dep = (Element) deps.item(i);
                    if (!"dev.turnstile".equals(text(dep, "groupId"))) {
                        continue;
                    }
                    seen++;
                    String artifact = text(dep, "artifactId");
                    if (!published.contains(artifact)) {
                        problems.add(e.getKey() + ": " + artifact + " is not a published module " + published);
                    }
                    if (!version.equals(text(dep, "version"))) {
                        problems.add(e.getKey() + ": " + artifact + " at " + text(dep, "version") + ", not " + version);
                    }
                }
            }
        }
        assertThat(seen).as("dev.turnstile dependencies shown in the docs").isPositive();
        assertThat(problems).isEmpty();
    }

    private static String text(Element parent, String tag) {
        NodeList nodes = parent.getElementsByTagName(tag);
        return nodes.getLength() == 0 ? "" : nodes.item(0).getTextContent().trim();
    }

    /** The modules the BOM lists: exactly the published ones (scripts/check-publishable.sh checks that). */
    private static Set<String> publishedModules() throws IOException {
        Set<String> modules = new HashSet<>();
        Matcher m = Pattern.compile("<artifactId>(turnstile-[a-z0-9-]+)</artifactId>")
                .matcher(Files.readString(ROOT.resolve("turnstile-bom/pom.xml")));
        while (m.find()) {
            modules.add(m.group(1));
        }
        return modules;
    }

    /** The blocks in {@code language} in README.md and every page under docs/ (subfolders too), by file. */
    private static Map<String, List<String>> blocksIn(String language) throws IOException {
        List<Path> docs = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> pages = Files.walk(ROOT.resolve("docs"))) {
            pages.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        Map<String, List<String>> found = new LinkedHashMap<>();
        for (Path doc : docs) {
            for (Block block : blocks(Files.readString(doc))) {
                if (block.language().equals(language)) {
                    found.computeIfAbsent(ROOT.relativize(doc).toString(), k -> new ArrayList<>()).add(block.code());
                }
            }
        }
        return found;
    }

    /**
     * A fenced code block: its language (the info string's first word, in lower case, as GitHub
     * reads it), its code, and the text of the page before it.
     */
    record Block(String language, String code, String before) {}

    /**
     * The fenced code blocks of a Markdown page as CommonMark reads them: a fence of three or more
     * backticks or tildes indented by up to three spaces (in a list item too), closed by a fence of
     * the same character at least as long; the opening fence's indentation is taken off the code's
     * lines; CR LF line ends count as LF.
     */
    static List<Block> blocks(String page) {
        String[] lines = page.replace("\r\n", "\n").replace('\r', '\n').split("\n", -1);
        List<Block> out = new ArrayList<>();
        StringBuilder before = new StringBuilder();
        for (int i = 0; i < lines.length; i++) {
            Matcher open = FENCE.matcher(lines[i]);
            if (!open.matches() || (open.group(2).charAt(0) == '`' && open.group(3).contains("`"))) {
                before.append(lines[i]).append('\n');
                continue;
            }
            int indent = open.group(1).length();
            String fence = open.group(2);
            String info = open.group(3).strip();
            String language = info.isEmpty() ? "" : info.split("[\\s{]", 2)[0].toLowerCase(java.util.Locale.ROOT);
            StringBuilder code = new StringBuilder();
            int j = i + 1;
            for (; j < lines.length; j++) {
                Matcher close = FENCE.matcher(lines[j]);
                if (close.matches() && close.group(2).charAt(0) == fence.charAt(0) && close.group(2).length() >= fence.length()
                        && close.group(3).isBlank()) {
                    break;
                }
                String line = lines[j];
                int strip = 0;
                while (strip < indent && strip < line.length() && line.charAt(strip) == ' ') {
                    strip++;
                }
                code.append(line.substring(strip)).append('\n');
            }
            out.add(new Block(language, code.toString(), before.toString()));
            before.setLength(0);
            i = j;
        }
        return out;
    }
}
