package dev.turnstile.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The docs are pages that link to one another (the README is the front page, each store and
 * feature has its page under {@code docs/}): a link that points at a file or a heading that is not
 * there is a dead end for the reader, so every relative link must resolve, anchors included, and
 * every page must be reachable from the README.
 */
class LinksTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    /** An inline link or image target: {@code [text](target)} or {@code [text](target "title")}. */
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern HEADING = Pattern.compile("^ {0,3}#{1,6}\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern CODE_SPAN = Pattern.compile("(`+)[^`].*?\\1");
    /** The README is a front page: what it is, the stores, a quick start per entry point, links. */
    private static final int README_MAX_LINES = 400;

    @Test
    void everyRelativeLinkResolvesToAFileAndAHeading() throws IOException {
        List<String> broken = new ArrayList<>();
        for (Path page : pages()) {
            for (String target : links(page)) {
                String problem = problem(page, target);
                if (problem != null) {
                    broken.add(ROOT.relativize(page) + ": (" + target + ") " + problem);
                }
            }
        }
        assertThat(broken).as("links that lead nowhere").isEmpty();
    }

    @Test
    void everyPageUnderDocsIsReachableFromTheReadme() throws IOException {
        Set<Path> seen = new HashSet<>();
        Deque<Path> todo = new ArrayDeque<>(List.of(ROOT.resolve("README.md")));
        while (!todo.isEmpty()) {
            Path page = todo.pop();
            if (!seen.add(page)) {
                continue;
            }
            for (String target : links(page)) {
                Path file = fileOf(page, target);
                if (file != null && file.toString().endsWith(".md") && Files.isRegularFile(file)) {
                    todo.push(file);
                }
            }
        }
        List<Path> orphans = new ArrayList<>();
        for (Path page : pages()) {
            if (page.startsWith(ROOT.resolve("docs")) && !seen.contains(page)) {
                orphans.add(ROOT.relativize(page));
            }
        }
        assertThat(orphans).as("pages under docs/ that no chain of links from README.md reaches").isEmpty();
    }

    @Test
    void theReadmeStaysAFrontPage() throws IOException {
        long lines = Files.readAllLines(ROOT.resolve("README.md")).size();
        assertThat(lines).as("README.md lines: details belong in a page under docs/, linked from it")
                .isLessThanOrEqualTo(README_MAX_LINES);
    }

    @Test
    void slugsAreGitHubs() {
        assertThat(slug("The command never outlives the lock")).isEqualTo("the-command-never-outlives-the-lock");
        assertThat(slug("Switching from ShedLock's `@SchedulerLock`")).isEqualTo("switching-from-shedlocks-schedulerlock");
        assertThat(slug("Scheduled jobs (plain Java)")).isEqualTo("scheduled-jobs-plain-java");
        assertThat(slug("Per store: what holds when the JVM, the guard or both are frozen or killed"))
                .isEqualTo("per-store-what-holds-when-the-jvm-the-guard-or-both-are-frozen-or-killed");
        assertThat(slug("Fence = the node's creation zxid (`czxid`)")).isEqualTo("fence--the-nodes-creation-zxid-czxid");
        assertThat(slug("Read [the page](x.md) first")).isEqualTo("read-the-page-first");
    }

    /** Why {@code target}, linked from {@code page}, leads nowhere; null when it leads somewhere. */
    private static String problem(Path page, String target) throws IOException {
        if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
            return null;                                   // http:, https:, mailto:: not checked offline
        }
        Path file = fileOf(page, target);
        if (file == null || !file.startsWith(ROOT)) {
            return "points outside the repository";
        }
        if (!Files.exists(file)) {
            return "no such file";
        }
        int hash = target.indexOf('#');
        if (hash < 0) {
            return null;
        }
        String anchor = target.substring(hash + 1);
        if (!file.toString().endsWith(".md")) {
            return "an anchor into a file that is not Markdown";
        }
        return anchors(file).contains(anchor) ? null : "no heading with the anchor #" + anchor;
    }

    /** The file a relative link points at (the page itself for a bare {@code #anchor}). */
    private static Path fileOf(Path page, String target) {
        if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
            return null;
        }
        String path = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
        return path.isEmpty() ? page : page.getParent().resolve(path).normalize();
    }

    /** The pages checked: the README, CONTRIBUTING.md, every page under docs/ and the examples' READMEs. */
    private static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("CONTRIBUTING.md")));
        for (String folder : List.of("docs", "examples")) {
            try (Stream<Path> files = Files.walk(ROOT.resolve(folder))) {
                files.filter(p -> p.toString().endsWith(".md") && !p.toString().contains("/target/"))
                        .sorted().forEach(pages::add);
            }
        }
        return pages;
    }

    /** The link targets in a page's prose (not in code blocks or code spans). */
    private static Set<String> links(Path page) throws IOException {
        Set<String> targets = new LinkedHashSet<>();
        Matcher m = LINK.matcher(CODE_SPAN.matcher(prose(Files.readString(page))).replaceAll(""));
        while (m.find()) {
            targets.add(m.group(1));
        }
        return targets;
    }

    /** The anchors GitHub gives a page's headings (a repeated heading gets -1, -2, …). */
    private static Set<String> anchors(Path page) throws IOException {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : prose(Files.readString(page)).split("\n")) {
            Matcher h = HEADING.matcher(line);
            if (h.matches()) {
                String slug = slug(h.group(1));
                int n = seen.merge(slug, 1, Integer::sum) - 1;
                anchors.add(n == 0 ? slug : slug + "-" + n);
            }
        }
        return anchors;
    }

    /** GitHub's heading anchor: link text kept, lower case, punctuation dropped, spaces to hyphens. */
    static String slug(String heading) {
        String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1");
        return text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}\\p{M}_\\- ]", "").replace(' ', '-');
    }

    /** The page without its fenced code blocks (a closing fence is added so that trailing prose is kept). */
    private static String prose(String page) {
        StringBuilder out = new StringBuilder();
        for (SnippetsTest.Block block : SnippetsTest.blocks(page + "\n~~~~~~~~~~~~~~~~\n~~~~~~~~~~~~~~~~\n")) {
            out.append(block.before());
        }
        return out.toString();
    }
}
