package dev.turnstile.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A part of docs/reliability.md between two markers ({@code <!-- NAME:start -->} and
 * {@code <!-- NAME:end -->}), so that several runs can each rewrite their own part of one document:
 * the short matrix ({@link Report#write}) writes everything outside the markers and keeps every
 * marked section as it is; the long run ({@link #LONG}) and the CLI runs ({@link #CLI}) rewrite only
 * their own section.
 */
final class MarkedSection {
    /** {@link CliChaos}'s table. */
    static final MarkedSection CLI = new MarkedSection("cli-chaos");
    /** The long run's tables ({@code run.sh --long}). */
    static final MarkedSection LONG = new MarkedSection("long-run");

    private static final Pattern ANY = Pattern.compile("<!-- ([a-z0-9-]+):start -->.*?<!-- \\1:end -->\n?", Pattern.DOTALL);

    final String start;
    final String end;

    private MarkedSection(String name) {
        this.start = "<!-- " + name + ":start -->";
        this.end = "<!-- " + name + ":end -->";
    }

    /** The marked section of a document, markers included, or "" if it has none. */
    String in(Path doc) {
        return in(read(doc));
    }

    private String in(String text) {
        int s = text.indexOf(start);
        int e = text.indexOf(end, Math.max(s, 0));
        return s >= 0 && e > s ? text.substring(s, e + end.length()) + "\n" : "";
    }

    /**
     * Writes {@code body} as the document's marked section: in place of the old one; else before the
     * first other marked section (so the long run's tables come before the CLI's); else at the end.
     */
    void write(Path doc, String body) {
        String section = start + "\n" + body + (body.endsWith("\n") ? "" : "\n") + end + "\n";
        String text = read(doc);
        String old = in(text);
        String updated;
        if (!old.isEmpty()) {
            int at = text.indexOf(old);
            updated = text.substring(0, at) + section + text.substring(at + old.length());
        } else {
            Matcher m = ANY.matcher(text);
            if (m.find()) {
                updated = text.substring(0, m.start()) + section + "\n" + text.substring(m.start());
            } else {
                updated = text + (text.isEmpty() || text.endsWith("\n\n") ? "" : text.endsWith("\n") ? "\n" : "\n\n") + section;
            }
        }
        try {
            Files.writeString(doc, updated);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every marked section of a document, markers included, in document order ("" if none). */
    static String allIn(Path doc) {
        Matcher m = ANY.matcher(read(doc));
        List<String> parts = new ArrayList<>();
        while (m.find()) {
            String p = m.group();
            parts.add(p.endsWith("\n") ? p : p + "\n");
        }
        return String.join("\n", parts);
    }

    private static String read(Path doc) {
        try {
            return Files.exists(doc) ? Files.readString(doc) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
