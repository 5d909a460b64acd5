package dev.turnstile.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;

/**
 * A grouped bar chart drawn with plain AWT into a PNG (headless: no window, no chart library).
 * One group per category (contender), one bar per series (scenario or round), the value printed
 * over each bar, optional min–max whiskers and an optional dashed reference line (the floor).
 */
final class BarChart {
    private static final Color[] PALETTE = {
        new Color(0x44, 0x77, 0xAA), new Color(0xEE, 0x66, 0x77), new Color(0x22, 0x88, 0x33),
        new Color(0xCC, 0xBB, 0x44), new Color(0x66, 0xCC, 0xEE), new Color(0xAA, 0x33, 0x77),
    };
    private static final int WIDTH = 1000;
    private static final int HEIGHT = 600;

    /**
     * One bar per category.
     *
     * @param low whisker bottoms, or {@code null} for no whiskers
     * @param high whisker tops, or {@code null}
     */
    record Series(String name, double[] values, double[] low, double[] high) {}

    private final String title;
    private final String subtitle;
    private final String yLabel;
    private final String valueFormat;
    private final List<String> categories;
    private final List<Series> series = new ArrayList<>();
    private double referenceY = Double.NaN;
    private String referenceLabel;

    /**
     * @param valueFormat how values are printed over the bars, such as {@code %.2f×}
     */
    BarChart(String title, String subtitle, String yLabel, String valueFormat, List<String> categories) {
        this.title = title;
        this.subtitle = subtitle;
        this.yLabel = yLabel;
        this.valueFormat = valueFormat;
        this.categories = List.copyOf(categories);
    }

    BarChart series(String name, double[] values, double[] low, double[] high) {
        if (values.length != categories.size()) {
            throw new IllegalArgumentException(name + ": " + values.length + " values for " + categories.size() + " categories");
        }
        series.add(new Series(name, values, low, high));
        return this;
    }

    BarChart reference(double y, String label) {
        this.referenceY = y;
        this.referenceLabel = label;
        return this;
    }

    /** Renders the chart and writes it as a PNG. */
    void write(Path file) throws IOException {
        BufferedImage img = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            draw(g);
        } finally {
            g.dispose();
        }
        if (!ImageIO.write(img, "png", file.toFile())) {
            throw new IOException("no PNG writer in this JVM");
        }
    }

    private void draw(Graphics2D g) {
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, WIDTH, HEIGHT);

        int left = 90;
        int right = WIDTH - 30;
        int top = 80;
        int bottom = HEIGHT - 110;

        // Titles.
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 20));
        centered(g, title, WIDTH / 2, 32);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        g.setColor(Color.DARK_GRAY);
        centered(g, subtitle, WIDTH / 2, 54);

        // Y scale from 0 to a round number above every bar and the reference line. Whiskers count
        // up to 1.5 times the tallest bar; a longer one (one noisy slice) is clipped with an arrow
        // and its top printed, so it cannot flatten every other bar.
        double tallest = Double.isNaN(referenceY) ? 0 : referenceY;
        for (Series s : series) {
            for (double v : s.values()) {
                tallest = Math.max(tallest, finite(v));
            }
        }
        double max = tallest;
        for (Series s : series) {
            if (s.high() != null) {
                for (double h : s.high()) {
                    max = Math.max(max, Math.min(finite(h), 1.5 * tallest));
                }
            }
        }
        double step = niceStep(max <= 0 ? 1 : max * 1.12 / 6);
        double yMax = Math.ceil(max * 1.12 / step) * step;
        if (yMax <= 0) {
            yMax = step;
        }
        final double scaleMax = yMax;
        java.util.function.DoubleToIntFunction yOf = v -> (int) Math.round(bottom - (v / scaleMax) * (bottom - top));

        // Grid and Y tick labels.
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        FontMetrics fm = g.getFontMetrics();
        int decimals = step >= 1 ? 0 : (int) Math.ceil(-Math.log10(step) + 1e-9);
        for (double v = 0; v <= yMax + step / 2; v += step) {
            int y = yOf.applyAsInt(v);
            g.setColor(new Color(0xE4, 0xE4, 0xE4));
            g.drawLine(left, y, right, y);
            g.setColor(Color.DARK_GRAY);
            String label = String.format(Locale.ROOT, "%." + decimals + "f", v);
            g.drawString(label, left - 8 - fm.stringWidth(label), y + fm.getAscent() / 2 - 1);
        }
        g.setColor(Color.BLACK);
        g.drawLine(left, top, left, bottom);
        g.drawLine(left, bottom, right, bottom);

        // Y axis label, rotated.
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        AffineTransform saved = g.getTransform();
        g.rotate(-Math.PI / 2);
        centered(g, yLabel, -(top + bottom) / 2, 24);
        g.setTransform(saved);

        // Bars.
        int groups = categories.size();
        double groupWidth = (double) (right - left) / Math.max(1, groups);
        double barWidth = groupWidth * 0.72 / Math.max(1, series.size());
        Font valueFont = new Font(Font.SANS_SERIF, Font.BOLD, series.size() * groups > 14 ? 11 : 13);
        for (int c = 0; c < groups; c++) {
            double groupStart = left + c * groupWidth + groupWidth * 0.14;
            for (int s = 0; s < series.size(); s++) {
                Series ser = series.get(s);
                double v = ser.values()[c];
                int x = (int) Math.round(groupStart + s * barWidth);
                int w = (int) Math.max(1, Math.round(barWidth) - 4);
                int labelTop;
                if (Double.isFinite(v)) {
                    int y = yOf.applyAsInt(v);
                    g.setColor(PALETTE[s % PALETTE.length]);
                    g.fillRect(x, y, w, bottom - y);
                    labelTop = y;
                    if (ser.low() != null && ser.high() != null && Double.isFinite(ser.low()[c]) && Double.isFinite(ser.high()[c])) {
                        double hi = ser.high()[c];
                        boolean clipped = hi > yMax;
                        int yLo = yOf.applyAsInt(ser.low()[c]);
                        int yHi = yOf.applyAsInt(Math.min(hi, yMax));
                        int mid = x + w / 2;
                        g.setColor(new Color(0x33, 0x33, 0x33));
                        g.setStroke(new BasicStroke(1.5f));
                        g.drawLine(mid, yLo, mid, yHi);
                        g.drawLine(mid - w / 6, yLo, mid + w / 6, yLo);
                        if (clipped) {
                            g.fillPolygon(new int[] {mid - 5, mid + 5, mid}, new int[] {yHi + 8, yHi + 8, yHi - 2}, 3);
                            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
                            g.drawString("max " + String.format(Locale.ROOT, valueFormat, hi), mid + 6, yHi + 10);
                        } else {
                            g.drawLine(mid - w / 6, yHi, mid + w / 6, yHi);
                        }
                        g.setStroke(new BasicStroke(1f));
                        // With a clipped whisker the value goes just above the bar, beside the whisker.
                        labelTop = clipped ? labelTop : Math.min(labelTop, yHi);
                    }
                } else {
                    labelTop = bottom;
                }
                g.setFont(valueFont);
                String text = Double.isFinite(v) ? String.format(Locale.ROOT, valueFormat, v) : "n/a";
                FontMetrics vm = g.getFontMetrics();
                int tw = vm.stringWidth(text);
                g.setColor(new Color(255, 255, 255, 220)); // keeps a whisker from striking through the value
                g.fillRect(x + w / 2 - tw / 2 - 2, labelTop - 5 - vm.getAscent(), tw + 4, vm.getAscent() + 2);
                g.setColor(Color.BLACK);
                centered(g, text, x + w / 2, labelTop - 5);
            }
            // Category label under the group.
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
            g.setColor(Color.BLACK);
            centered(g, categories.get(c), (int) Math.round(left + c * groupWidth + groupWidth / 2), bottom + 22);
        }

        // Reference line (drawn over the bars so it stays visible).
        if (!Double.isNaN(referenceY)) {
            int y = yOf.applyAsInt(referenceY);
            g.setColor(new Color(0xCC, 0x22, 0x22));
            g.setStroke(new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {8f, 6f}, 0f));
            g.drawLine(left, y, right, y);
            g.setStroke(new BasicStroke(1f));
        }

        // Legend, centred under the category labels.
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        fm = g.getFontMetrics();
        List<Integer> widths = new ArrayList<>();
        for (int s = 0; s < series.size(); s++) {
            widths.add(18 + fm.stringWidth(series.get(s).name()) + 26);
        }
        if (referenceLabel != null) {
            widths.add(30 + fm.stringWidth(referenceLabel) + 26);
        }
        if (series.stream().anyMatch(s -> s.low() != null)) {
            widths.add(18 + fm.stringWidth("whiskers: min–max over slices") + 10);
        }
        int total = widths.stream().mapToInt(Integer::intValue).sum();
        int x = (WIDTH - total) / 2;
        int y = HEIGHT - 42;
        int i = 0;
        for (int s = 0; s < series.size(); s++) {
            g.setColor(PALETTE[s % PALETTE.length]);
            g.fillRect(x, y - 11, 13, 13);
            g.setColor(Color.BLACK);
            g.drawString(series.get(s).name(), x + 18, y);
            x += widths.get(i++);
        }
        if (referenceLabel != null) {
            g.setColor(new Color(0xCC, 0x22, 0x22));
            g.setStroke(new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {8f, 6f}, 0f));
            g.drawLine(x, y - 5, x + 24, y - 5);
            g.setStroke(new BasicStroke(1f));
            g.setColor(Color.BLACK);
            g.drawString(referenceLabel, x + 30, y);
            x += widths.get(i++);
        }
        if (series.stream().anyMatch(s -> s.low() != null)) {
            g.setColor(new Color(0x33, 0x33, 0x33));
            g.setStroke(new BasicStroke(1.5f));
            g.drawLine(x + 6, y - 12, x + 6, y + 2);
            g.drawLine(x + 2, y - 12, x + 10, y - 12);
            g.drawLine(x + 2, y + 2, x + 10, y + 2);
            g.setStroke(new BasicStroke(1f));
            g.setColor(Color.BLACK);
            g.drawString("whiskers: min–max over slices", x + 18, y);
        }
    }

    private static double finite(double v) {
        return Double.isFinite(v) ? v : 0;
    }

    /** 1, 2, 2.5 or 5 times a power of ten, at least {@code raw}. */
    private static double niceStep(double raw) {
        double p = Math.pow(10, Math.floor(Math.log10(raw)));
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (m * p >= raw) {
                return m * p;
            }
        }
        return 10 * p;
    }

    private static void centered(Graphics2D g, String text, int cx, int baseline) {
        g.drawString(text, cx - g.getFontMetrics().stringWidth(text) / 2, baseline);
    }
}
