package dev.turnstile.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The section of docs/reliability.md that {@link CliChaos} writes, between two markers, so that the
 * main matrix ({@link Report}) and the CLI runs can each rewrite their own part of one document.
 */
final class CliSection {
    static final String START = "<!-- cli-chaos:start -->";
    static final String END = "<!-- cli-chaos:end -->";

    private CliSection() {}

    /** The marked section of a document, markers included, or "" if it has none. */
    static String in(Path doc) {
        try {
            if (!Files.exists(doc)) {
                return "";
            }
            String text = Files.readString(doc);
            int start = text.indexOf(START);
            int end = text.indexOf(END);
            return start >= 0 && end > start ? text.substring(start, end + END.length()) + "\n" : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Writes {@code body} as the document's marked section: in place of the old one, else at its end. */
    static void write(Path doc, String body) {
        String section = START + "\n" + body + END + "\n";
        try {
            String text = Files.exists(doc) ? Files.readString(doc) : "";
            String old = in(doc);
            String updated = old.isEmpty() ? text + (text.isEmpty() || text.endsWith("\n\n") ? "" : "\n") + section
                    : text.replace(old, section);
            Files.writeString(doc, updated);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
