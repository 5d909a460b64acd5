package dev.turnstile.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shell commands the docs show are checked too, as the Java and Maven blocks are by
 * {@link SnippetsTest}: every command of this project's (the {@code turnstile} CLI, and the
 * scripts under {@code scripts/}, {@code turnstile-bench/}, {@code turnstile-chaos/} and
 * {@code examples/}) names a script that exists and options that the script or the CLI takes, and
 * the README's main job runs as written and does what the README says it does. The other commands
 * (the test suite itself, the benchmarks, the chaos runs, a release) take minutes to an hour: CI runs
 * the test suite and the release, and each of the others says in its page how long it takes.
 */
class DocsCommandsTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    /** The blocks a reader runs in a shell: sh and its kin, and blocks with no language (usage, cron lines). */
    private static final Set<String> SHELL = Set.of("sh", "bash", "shell", "console", "");
    private static final Pattern SCRIPT = Pattern.compile("(scripts/[\\w-]+\\.sh|turnstile-bench/[\\w-]+\\.sh|turnstile-chaos/run\\.sh"
            + "|examples/[\\w-]+/run\\.sh)");
    private static final Set<String> SUBCOMMANDS = Set.of("run", "locks", "release", "prune", "schema", "console");
    private static final Set<String> SEPARATORS = Set.of(";", "&&", "||", "|", "&", "{", "}", "(", ")");

    @TempDir Path dir;

    /** One command of this project's in a page: the program as written, and its words up to the next shell separator. */
    record Command(String page, String program, List<String> words) {
        List<String> options() {
            List<String> out = new ArrayList<>();
            for (String word : words) {
                if (word.equals("--")) {
                    break; // turnstile run: the command to run starts here
                }
                // usage lines write optional parts as [--x V] and alternatives as -q|--quiet
                for (String part : word.replaceAll("[\\[\\]]", "").split("\\|")) {
                    if (part.matches("--?[a-zA-Z][\\w-]*(=.*)?")) {
                        out.add(part.replaceAll("=.*", ""));
                    }
                }
            }
            return out;
        }

        @Override
        public String toString() {
            return page + ": " + program + " " + String.join(" ", words);
        }
    }

    @Test
    @org.junit.jupiter.api.Timeout(300)
    void everyCommandNamesAScriptThatExistsAndOptionsItTakes() throws Exception {
        List<Command> commands = commands();
        assertThat(commands).as("commands found in the docs").hasSizeGreaterThan(15);
        assertThat(commands).as("a CLI command and a script found").anyMatch(c -> c.program().endsWith("turnstile"))
                .anyMatch(c -> c.program().endsWith(".sh"));
        Map<String, String> helps = new HashMap<>();
        Set<String> checked = new java.util.TreeSet<>();
        List<String> problems = new ArrayList<>();
        for (Command c : commands) {
            if (c.program().endsWith(".sh")) {
                Path script = ROOT.resolve(c.program());
                if (!Files.isExecutable(script)) {
                    problems.add(c + ": " + c.program() + " does not exist or is not executable");
                    continue;
                }
                String text = Files.readString(script);
                for (String option : c.options()) {
                    if (option.startsWith("--") && !Pattern.compile("(?m)(^|[\\s(|])" + Pattern.quote(option) + "(\\s*[|)]|=\\*)")
                            .matcher(text).find()) {
                        problems.add(c + ": " + c.program() + " has no option " + option);
                    }
                }
            } else {
                String sub = c.words().stream().filter(w -> !w.startsWith("-")).findFirst().orElse("");
                List<String> options = c.options();
                if (sub.isEmpty() || sub.equals("--")) {
                    options.removeAll(List.of("--version", "--help", "-h", "-V"));
                    if (!options.isEmpty()) {
                        problems.add(c + ": options without a subcommand: " + options);
                    }
                    continue;
                }
                String help = helps.computeIfAbsent(sub, DocsCommandsTest::help);
                if (!help.contains("Usage: turnstile " + sub)) {
                    problems.add(c + ": turnstile has no subcommand '" + sub + "'");
                    continue;
                }
                checked.add(sub);
                for (String option : options) {
                    // on one of the help's option lines ("  -q, --quiet-busy  …", "      --ttl=DURATION  …"),
                    // not anywhere in its prose
                    if (!Pattern.compile("^\\s+(?:-\\w,\\s+)?" + Pattern.quote(option) + "(?:[=\\s,]|$)", Pattern.MULTILINE)
                            .matcher(help).find()) {
                        problems.add(c + ": turnstile " + sub + " has no option " + option);
                    }
                }
            }
        }
        assertThat(problems).as("commands in the docs that would fail").isEmpty();
        assertThat(checked).as("subcommands the docs show").containsAll(SUBCOMMANDS);
    }

    /**
     * The configuration blocks: every property a {@code properties} block sets (or shows commented
     * out) is one the starter declares in its configuration metadata, and every file a {@code yaml}
     * block includes (a Liquibase changelog) is on the class path.
     */
    @Test
    void everyPropertyAndIncludedFileInTheDocsExists() throws Exception {
        StringBuilder all = new StringBuilder(); // every jar's metadata: Spring Boot's own comes first
        for (java.net.URL url : java.util.Collections.list(getClass().getClassLoader()
                .getResources("META-INF/spring-configuration-metadata.json"))) {
            try (var in = url.openStream()) {
                String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                // the "properties" array only: a group's name ("turnstile.store") is not a property
                int from = json.indexOf("\"properties\"");
                int to = json.indexOf("\"hints\"", Math.max(from, 0));
                all.append(from < 0 ? "" : json.substring(from, to < 0 ? json.length() : to));
            }
        }
        String metadata = all.toString().replaceAll("\"name\"\\s*:\\s*", "\"name\": ");
        assertThat(metadata).as("the starter's configuration metadata").contains("\"name\": \"turnstile.store.url\"");
        List<String> problems = new ArrayList<>();
        int checked = 0;
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        for (Path page : pages) {
            // set in the prose as inline code: `turnstile.store.url=…`; one segment after "turnstile." is
            // a store URL's option (`?turnstile.table=…`), not a Spring property, and is left out
            java.util.regex.Matcher inline = Pattern.compile("`(turnstile\\.[a-z0-9-]+\\.[a-z0-9.-]+)(?:\\[\\d+\\])?=")
                    .matcher(Files.readString(page));
            while (inline.find()) {
                checked++;
                if (!metadata.contains("\"name\": \"" + inline.group(1) + "\"")) {
                    problems.add(ROOT.relativize(page) + ": no property " + inline.group(1));
                }
            }
            for (SnippetsTest.Block block : SnippetsTest.blocks(Files.readString(page))) {
                for (String line : block.code().split("\n")) {
                    java.util.regex.Matcher property = Pattern.compile("^#?\\s*(turnstile\\.[\\w.-]+)\\s*[=:]").matcher(line);
                    if (block.language().equals("properties") && property.find()) {
                        checked++;
                        if (!metadata.contains("\"name\": \"" + property.group(1) + "\"")) {
                            problems.add(ROOT.relativize(page) + ": no property " + property.group(1));
                        }
                    }
                    java.util.regex.Matcher file = Pattern.compile("^\\s*file:\\s*(\\S+)").matcher(line);
                    if (block.language().equals("yaml") && file.find()) {
                        checked++;
                        if (getClass().getClassLoader().getResource(file.group(1)) == null) {
                            problems.add(ROOT.relativize(page) + ": no file " + file.group(1) + " on the class path");
                        }
                    }
                }
            }
        }
        assertThat(checked).as("properties and included files found").isGreaterThanOrEqualTo(10);
        assertThat(problems).isEmpty();
    }

    /**
     * The README's main job, run as written in a directory of its own: {@code bin/turnstile} there
     * starts the CLI from this build (the launcher itself is tested from the installed archive by
     * {@code scripts/dist-test.sh}), and the default store is the SQLite file under its
     * {@code XDG_STATE_HOME}. The first command holds the lock for 3 s; the second starts 1.5 s after
     * it and must find the lock busy. On a loaded machine the first JVM can take longer than that
     * 1.5 s to acquire, and then the second runs first: that is tried again, up to three times.
     */
    @Test
    @org.junit.jupiter.api.Timeout(300)
    void theReadmeMainJobRunsAsWritten() throws Exception {
        String line = SnippetsTest.blocks(Files.readString(ROOT.resolve("README.md"))).stream()
                .filter(b -> b.language().equals("sh") && b.code().contains("bin/turnstile run"))
                .map(b -> b.code().strip()).findFirst().orElseThrow();
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path launcher = bin.resolve("turnstile");
        Files.writeString(launcher, "#!/bin/sh\nexec '" + javaBin() + "' -cp '" + System.getProperty("java.class.path")
                + "' dev.turnstile.cli.TurnstileCommand \"$@\"\n");
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<String> outputs = new ArrayList<>();
        for (int attempt = 1; attempt <= 3; attempt++) {
            ProcessBuilder pb = new ProcessBuilder("bash", "-c", line).directory(dir.toFile());
            pb.environment().remove("TURNSTILE_STORE");
            pb.environment().put("HOME", dir.toString());
            pb.environment().put("XDG_STATE_HOME", dir.resolve("state").toString());
            String out = run(pb);
            assertThat(out).as("the main job ends within a minute, exit 0").doesNotContain(TIMED_OUT).doesNotContain("[exit ");
            outputs.add(out);
            assertThat(out).as("turnstile --version first").startsWith("turnstile ");
            if (!out.contains("B runs")) {
                assertThat(out).contains("A runs with fence ").contains("B exited 75 (75 = busy)");
                return;
            }
        }
        throw new AssertionError("in three attempts the second command never found the lock busy:\n" + String.join("\n---\n", outputs));
    }

    private static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static final String TIMED_OUT = "[DocsCommandsTest: timed out, process tree destroyed]";

    /**
     * Runs a process with its output in a file (a pipe would keep a reader waiting for every process
     * that inherited it), for at most a minute; then it and its descendants are destroyed.
     *
     * @return what it printed, with {@link #TIMED_OUT} after it if it had to be stopped, or its exit code if not zero
     */
    private static String run(ProcessBuilder pb) throws IOException, InterruptedException {
        Path out = Files.createTempFile("docs-command", ".out");
        try {
            Process p = pb.redirectErrorStream(true).redirectOutput(out.toFile()).start();
            boolean ended = p.waitFor(60, TimeUnit.SECONDS);
            if (!ended) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
            String text = Files.readString(out, StandardCharsets.UTF_8);
            return ended ? text + (p.exitValue() == 0 ? "" : "[exit " + p.exitValue() + "]") : text + TIMED_OUT;
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** The help of a subcommand, as the CLI prints it (its usage, options and their aliases). */
    private static String help(String sub) {
        try {
            return run(new ProcessBuilder(javaBin(), "-cp", System.getProperty("java.class.path"),
                    "dev.turnstile.cli.TurnstileCommand", sub, "--help"));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** This project's commands in the shell blocks of README.md, CONTRIBUTING.md, docs/ and the examples' READMEs. */
    static List<Command> commands() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("CONTRIBUTING.md")));
        try (Stream<Path> docs = Files.walk(ROOT.resolve("docs")); Stream<Path> examples = Files.walk(ROOT.resolve("examples"), 2)) {
            Stream.concat(docs, examples).filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        List<Command> out = new ArrayList<>();
        for (Path page : pages) {
            for (SnippetsTest.Block block : SnippetsTest.blocks(Files.readString(page))) {
                if (SHELL.contains(block.language())) {
                    out.addAll(commands(ROOT.relativize(page).toString(), block.code(), !block.language().isEmpty()));
                }
            }
        }
        return out;
    }

    /**
     * The commands in one block; a usage line continued on an indented line starting with [ counts
     * as one. In a block without a language (a usage text, a crontab line, a file listing) a word
     * {@code turnstile} counts only before a subcommand or an option: a listing's "bin/turnstile the
     * launcher" is prose.
     */
    static List<Command> commands(String page, String block, boolean shell) {
        List<String> lines = new ArrayList<>();
        for (String line : block.split("\n")) {
            if (!lines.isEmpty() && line.matches("\\s{2,}\\[.*")) {
                lines.set(lines.size() - 1, lines.get(lines.size() - 1) + " " + line.strip());
            } else {
                lines.add(line);
            }
        }
        List<Command> out = new ArrayList<>();
        for (String line : lines) {
            // a prompt, a comment and a crontab line's schedule are not part of the command
            List<String> words = words(line.replaceFirst("^\\$ ", "").replaceAll("(^|\\s)#(\\s.*|$)", "")
                    .replaceFirst("^\\s*([\\d*/,-]+\\s+){5}", ""));
            for (int i = 0; i < words.size(); i++) {
                String w = words.get(i);
                boolean cli = (w.equals("turnstile") || w.endsWith("/turnstile") && (w.startsWith("bin/") || w.contains("/bin/")))
                        && commandPosition(words, i);
                if (cli && !shell && !(i + 1 < words.size() && (SUBCOMMANDS.contains(words.get(i + 1))
                        || words.get(i + 1).startsWith("-")))) {
                    continue;
                }
                if (!cli && w.startsWith("./")) {
                    w = w.substring(2);
                }
                if (cli || SCRIPT.matcher(w).matches()) {
                    int end = i + 1;
                    while (end < words.size() && !SEPARATORS.contains(words.get(end))) {
                        end++;
                    }
                    out.add(new Command(page, w, List.copyOf(words.subList(i + 1, end))));
                    i = end;
                }
            }
        }
        return out;
    }

    /** Whether word {@code i} is where a command starts: first, after a separator, or after VAR=value words there. */
    private static boolean commandPosition(List<String> words, int i) {
        int j = i - 1;
        while (j >= 0 && words.get(j).matches("[A-Za-z_]\\w*=.*")) {
            j--;
        }
        return j < 0 || SEPARATORS.contains(words.get(j));
    }

    /**
     * A shell line's words: quotes group (and are dropped), separators are words of their own, and
     * a usage line's brackets keep their alternatives ({@code [-q|--quiet]}) in one word.
     */
    static List<String> words(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        char quote = 0;
        int brackets = 0;
        for (int i = 0; i < line.length(); i++) {
            char ch = line.charAt(i);
            if (quote != 0) {
                if (ch == quote) {
                    quote = 0;
                } else {
                    w.append(ch);
                }
            } else if (ch == '\'' || ch == '"') {
                quote = ch;
            } else if (Character.isWhitespace(ch) || ";&|{}()".indexOf(ch) >= 0 && !(ch == '|' && brackets > 0)) {
                if (w.length() > 0) {
                    out.add(w.toString());
                    w.setLength(0);
                }
                if (!Character.isWhitespace(ch)) {
                    boolean doubled = i + 1 < line.length() && line.charAt(i + 1) == ch && (ch == '&' || ch == '|');
                    out.add(doubled ? "" + ch + ch : String.valueOf(ch));
                    i += doubled ? 1 : 0;
                }
            } else {
                brackets += ch == '[' ? 1 : ch == ']' ? -1 : 0;
                w.append(ch);
            }
        }
        if (w.length() > 0) {
            out.add(w.toString());
        }
        return out;
    }
}
