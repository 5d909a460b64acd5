package dev.turnstile.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.knowm.xchart.AnnotationText;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.AxesChartStyler;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * A chart of one value per category (contender) and series (scenario or round), drawn with XChart
 * into a PNG (headless). Series with a min–max range are drawn as a dot (the median) on a vertical
 * range bar, side by side per category, with the value printed above, and a dashed reference line
 * (the floor) if one is set; series without ranges as grouped bars with their values on them.
 */
final class BarChart {
    private static final Color[] PALETTE = {
        new Color(0x44, 0x77, 0xAA), new Color(0xEE, 0x66, 0x77), new Color(0x22, 0x88, 0x33),
        new Color(0xCC, 0xBB, 0x44), new Color(0x66, 0xCC, 0xEE), new Color(0xAA, 0x33, 0x77),
    };
    private static final int WIDTH = 1000;
    private static final int HEIGHT = 600;
    private static final Font TICKS = new Font(Font.SANS_SERIF, Font.PLAIN, 13);
    private static final Font TITLES = new Font(Font.SANS_SERIF, Font.PLAIN, 13);

    /**
     * One value per category.
     *
     * @param low range bottoms, or {@code null} for no range
     * @param high range tops, or {@code null}
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
     * @param subtitle what was measured, shown under the plot (as the x axis' title)
     * @param valueFormat how values are printed over the bars or dots, such as {@code %.2f×}
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
        boolean ranges = series.stream().anyMatch(s -> s.low() != null && s.high() != null);
        Chart<?, ?> chart = ranges ? rangeChart() : barChart();
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /** Medians as dots on min–max bars: category i at x = i + 1, its series spread around it. */
    private XYChart rangeChart() {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(subtitle)
                .yAxisTitle(yLabel).build();
        style(chart.getStyler());
        chart.getStyler().setMarkerSize(11);
        chart.getStyler().setPlotGridVerticalLinesVisible(false);
        int n = categories.size();
        chart.getStyler().setXAxisMin(0.5).setXAxisMax(n + 0.5);
        // Category names sit inside the plot, along its foot: XChart's x-axis labels of an XY chart
        // cannot be pinned to the integer positions of the categories.
        chart.getStyler().setXAxisTicksVisible(false);
        chart.getStyler().setAnnotationTextFont(TICKS);
        double top = 0;
        double width = Math.min(0.6, 0.25 * series.size());
        List<double[]> labels = new ArrayList<>(); // x, top of the range, value
        for (int j = 0; j < series.size(); j++) {
            Series s = series.get(j);
            Color color = PALETTE[j % PALETTE.length];
            double[] xs = new double[n];
            for (int i = 0; i < n; i++) {
                xs[i] = i + 1 + (series.size() == 1 ? 0 : (j / (series.size() - 1.0) - 0.5) * width);
            }
            XYSeries dots = chart.addSeries(s.name(), xs, s.values());
            dots.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
            dots.setMarker(SeriesMarkers.CIRCLE);
            dots.setMarkerColor(color);
            for (int i = 0; i < n; i++) {
                double lo = s.low() == null ? s.values()[i] : s.low()[i];
                double hi = s.high() == null ? s.values()[i] : s.high()[i];
                XYSeries range = chart.addSeries(s.name() + " range " + i, new double[] {xs[i], xs[i]}, new double[] {lo, hi});
                range.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
                range.setMarker(SeriesMarkers.NONE);
                range.setLineColor(color);
                range.setLineStyle(new BasicStroke(3f));
                range.setShowInLegend(false);
                top = Math.max(top, hi);
                labels.add(new double[] {xs[i], hi, s.values()[i]});
            }
        }
        if (!Double.isNaN(referenceY)) {
            XYSeries ref = chart.addSeries(referenceLabel, new double[] {0.5, n + 0.5}, new double[] {referenceY, referenceY});
            ref.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
            ref.setMarker(SeriesMarkers.NONE);
            ref.setLineColor(new Color(0xCC, 0x22, 0x22));
            ref.setLineStyle(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {8f, 6f}, 0f));
            top = Math.max(top, referenceY);
        }
        double yMax = Math.ceil(top * 1.12 * 4) / 4;
        for (double[] l : labels) {
            chart.addAnnotation(new AnnotationText(String.format(Locale.ROOT, valueFormat, l[2]), l[0], l[1] + yMax * 0.03, false));
        }
        for (int i = 0; i < n; i++) {
            chart.addAnnotation(new AnnotationText(categories.get(i), i + 1, yMax * 0.03, false));
        }
        chart.getStyler().setYAxisMin(0.0).setYAxisMax(yMax);
        chart.getStyler().setYAxisDecimalPattern("0.0#");
        return chart;
    }

    /** Grouped bars with the value on each. */
    private CategoryChart barChart() {
        CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(subtitle)
                .yAxisTitle(yLabel).build();
        style(chart.getStyler());
        chart.getStyler().setLabelsVisible(true);
        chart.getStyler().setLabelsFont(TICKS);
        chart.getStyler().setLabelsPosition(1.0);
        chart.getStyler().setLabelsFontColorAutomaticEnabled(false);
        chart.getStyler().setLabelsFontColor(Color.BLACK);
        chart.getStyler().setAvailableSpaceFill(0.7);
        chart.getStyler().setYAxisDecimalPattern(valueFormat.contains(".0f") ? "#,##0" : "#,##0.0#");
        chart.getStyler().setSeriesColors(PALETTE);
        double top = 0;
        for (Series s : series) {
            List<Double> values = new ArrayList<>();
            for (double v : s.values()) {
                values.add(v);
                top = Math.max(top, v);
            }
            chart.addSeries(s.name(), categories, values);
        }
        chart.getStyler().setYAxisMin(0.0).setYAxisMax(top * 1.1);
        return chart;
    }

    private static void style(AxesChartStyler styler) {
        styler.setChartBackgroundColor(Color.WHITE);
        styler.setPlotBackgroundColor(Color.WHITE);
        styler.setPlotBorderVisible(false);
        styler.setPlotGridLinesColor(new Color(0xE4, 0xE4, 0xE4));
        styler.setLegendPosition(Styler.LegendPosition.OutsideS);
        styler.setLegendLayout(Styler.LegendLayout.Horizontal);
        styler.setLegendBorderColor(Color.WHITE);
        styler.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
        styler.setChartTitleBoxVisible(false);
        styler.setAxisTitleFont(TITLES);
        styler.setAxisTickLabelsFont(TICKS);
        styler.setAntiAlias(true);
        styler.setYAxisTickMarkSpacingHint(60);
    }
}
