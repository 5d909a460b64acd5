package dev.turnstile.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Builds a Markdown table, prints it and appends it to the report file
 * ({@code bench.report}), optionally followed by links to chart images beside it. Appending lets
 * the benchmarks of one {@code run.sh} share a file.
 */
final class Report {
    private final List<String> headers;
    private final List<List<String>> rows = new ArrayList<>();

    Report(String... headers) {
        this.headers = List.of(headers);
    }

    Report row(Object... cells) {
        if (cells.length != headers.size()) {
            throw new IllegalArgumentException("row has " + cells.length + " cells, table has " + headers.size() + " columns");
        }
        List<String> r = new ArrayList<>();
        for (Object c : cells) {
            r.add(String.valueOf(c));
        }
        rows.add(r);
        return this;
    }

    String markdown() {
        StringBuilder b = new StringBuilder();
        line(b, headers);
        List<String> rule = new ArrayList<>();
        for (int i = 0; i < headers.size(); i++) {
            rule.add(i == 0 ? "---" : "---:");
        }
        line(b, rule);
        rows.forEach(r -> line(b, r));
        return b.toString();
    }

    private static void line(StringBuilder b, List<String> cells) {
        b.append("| ").append(String.join(" | ", cells)).append(" |\n");
    }

    /**
     * Prints the section to standard output and appends it to the report file.
     *
     * @param images charts to show under the table: PNG files beside the report (see
     *     {@link #chartFile}), referenced by their file name
     */
    void emit(String title, String notes, Path... images) throws IOException {
        StringBuilder pictures = new StringBuilder();
        for (Path image : images) {
            String name = image.getFileName().toString();
            pictures.append("\n![").append(title).append(": ").append(name).append("](").append(name).append(")\n");
        }
        String section = "## " + title + " (" + OffsetDateTime.now().truncatedTo(ChronoUnit.SECONDS) + ")\n\n"
                + markdown() + (notes.isEmpty() ? "" : "\n" + notes + "\n") + "\n" + QuietGate.summaryAndReset() + "\n"
                + pictures + "\n";
        System.out.print(section);
        Path file = BenchConfig.reportFile();
        Files.createDirectories(file.getParent());
        Files.writeString(file, section, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        System.out.println("(appended to " + file + ")");
    }

    /** Where a chart of the report goes: beside the report file, so a relative link finds it. */
    static Path chartFile(String fileName) throws IOException {
        Path dir = BenchConfig.reportFile().getParent();
        Files.createDirectories(dir);
        return dir.resolve(fileName);
    }

    static String micros(double nanos) {
        return String.format(Locale.ROOT, "%.1f µs", nanos / 1e3);
    }

    static String millis(double nanos) {
        return String.format(Locale.ROOT, "%.2f ms", nanos / 1e6);
    }

    static String ratio(double median, double min, double max) {
        return String.format(Locale.ROOT, "%.2f× [%.2f–%.2f]", median, min, max);
    }

    static String number(double v, int decimals) {
        return String.format(Locale.ROOT, "%." + decimals + "f", v);
    }
}
