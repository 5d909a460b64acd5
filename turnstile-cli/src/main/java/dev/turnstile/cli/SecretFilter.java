package dev.turnstile.cli;

import dev.turnstile.spi.StoreUrls;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.Charset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/**
 * The last line of defence for secrets: every line turnstile writes to stderr (its own messages,
 * stack traces, SLF4J and java.util.logging output of the drivers) passes through here, and loses
 * the passwords of the store URLs the command has resolved, as written and percent-decoded.
 * Messages are redacted where they are made as well; this catches what a driver echoes.
 */
final class SecretFilter {
    private final List<String> urls = new CopyOnWriteArrayList<>();

    /** Remembers a store URL whose secrets must never be shown; ignores null (no URL given). */
    void addUrl(@Nullable String url) {
        if (url != null && !url.isEmpty() && !urls.contains(url)) {
            urls.add(url);
        }
    }

    String apply(String text) {
        String t = text;
        for (String url : urls) {
            t = StoreUrls.scrub(t, url);
        }
        return StoreUrls.redactUrlsIn(t);
    }

    /** A writer that filters whole lines (a secret is never split across two writes of one line). */
    Writer writer(Writer out) {
        return new Writer() {
            private final StringBuilder line = new StringBuilder();

            @Override
            public synchronized void write(char[] cbuf, int off, int len) throws IOException {
                for (int i = off; i < off + len; i++) {
                    line.append(cbuf[i]);
                    if (cbuf[i] == '\n') {
                        out.write(apply(line.toString()));
                        line.setLength(0);
                    }
                }
            }

            @Override
            public synchronized void flush() throws IOException {
                if (line.length() > 0) {
                    out.write(apply(line.toString()));
                    line.setLength(0);
                }
                out.flush();
            }

            @Override
            public void close() throws IOException {
                flush();
            }
        };
    }

    /** A print stream for {@code System.err}, where SLF4J Simple and the drivers' JUL loggers write. */
    PrintStream stream(PrintStream out, Charset charset) {
        OutputStream filtered = new OutputStream() {
            private final ByteArrayOutputStream line = new ByteArrayOutputStream();

            @Override
            public synchronized void write(int b) {
                line.write(b);
                if (b == '\n') {
                    emit();
                }
            }

            @Override
            public synchronized void flush() {
                emit();
                out.flush();
            }

            private void emit() {
                if (line.size() > 0) {
                    byte[] bytes = apply(line.toString(charset)).getBytes(charset);
                    out.write(bytes, 0, bytes.length);
                    line.reset();
                }
            }
        };
        return new PrintStream(filtered, true, charset);
    }
}
