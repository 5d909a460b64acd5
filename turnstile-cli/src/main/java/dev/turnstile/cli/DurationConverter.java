package dev.turnstile.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/** Parses {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h30m}, {@code 2d} and ISO-8601 {@code PT5M}. */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern PART = Pattern.compile("(\\d+)(ms|s|m|h|d)");

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    static Duration parse(String value) {
        String v = value.trim();
        if (v.startsWith("P") || v.startsWith("p")) {
            try {
                return Duration.parse(v);
            } catch (DateTimeParseException e) {
                throw e.getCause() instanceof ArithmeticException ? tooLarge(value) : invalid(value);
            }
        }
        Matcher m = PART.matcher(v);
        Duration total = Duration.ZERO;
        int end = 0;
        while (m.find() && m.start() == end) {
            try {
                long n = Long.parseLong(m.group(1));
                total = total.plus(switch (m.group(2)) {
                    case "ms" -> Duration.ofMillis(n);
                    case "s" -> Duration.ofSeconds(n);
                    case "m" -> Duration.ofMinutes(n);
                    case "h" -> Duration.ofHours(n);
                    default -> Duration.ofDays(n);
                });
            } catch (NumberFormatException | ArithmeticException e) {
                throw tooLarge(value);
            }
            end = m.end();
        }
        if (end == 0 || end != v.length()) {
            throw invalid(value);
        }
        return total;
    }

    private static CommandLine.TypeConversionException tooLarge(String value) {
        return new CommandLine.TypeConversionException("'" + value
                + "' is too large a duration: the limit is 366d");
    }

    private static CommandLine.TypeConversionException invalid(String value) {
        return new CommandLine.TypeConversionException("'" + value
                + "' is not a duration: use a number with a unit, such as 500ms, 30s, 5m, 1h30m or 2d");
    }
}
