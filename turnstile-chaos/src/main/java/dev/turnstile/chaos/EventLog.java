package dev.turnstile.chaos;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * An append-only file of events, one JSON object per line. Each line goes to the file in one
 * unbuffered write as it happens, so a worker killed with SIGKILL leaves every event it recorded.
 */
public final class EventLog implements AutoCloseable {
    private final FileOutputStream out;
    private final int worker;

    /**
     * Opens (appending) the log.
     *
     * @param file the file
     * @param worker the worker id stamped on events, {@code -1} for the harness
     */
    public EventLog(Path file, int worker) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            this.out = new FileOutputStream(file.toFile(), true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.worker = worker;
    }

    /** Records an event now. */
    public Event add(String type, long fence, String outcome, String detail) {
        return add(worker, type, fence, outcome, detail);
    }

    /** Records an event now, about another worker (the harness's faults). */
    public Event add(int about, String type, long fence, String outcome, String detail) {
        Event e = new Event(System.nanoTime(), System.currentTimeMillis(), about, type, fence, outcome, detail);
        write(e);
        return e;
    }

    /** Records an event that already has its times. */
    public synchronized void write(Event e) {
        try {
            out.write((e.toJson() + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    @Override
    public synchronized void close() {
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Reads a log; a last line cut short by a kill is skipped.
     *
     * @param file the file
     * @return its events in file order
     */
    public static List<Event> read(Path file) {
        List<Event> events = new ArrayList<>();
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (String line : lines) {
            if (line.isBlank()) {
                continue;
            }
            try {
                events.add(Event.fromJson(line));
            } catch (RuntimeException partial) {
                // a line torn by SIGKILL: nothing after it was written either
            }
        }
        return events;
    }
}
