package dev.turnstile.console;

import java.util.Map;

/**
 * What the {@link Console} answers: a status, a content type, extra headers (a redirect's
 * {@code Location}) and the body as text. The server adds the security headers from {@link
 * Console#SECURITY_HEADERS} to every response.
 *
 * @param status the HTTP status
 * @param contentType the body's content type, with its charset
 * @param headers extra headers
 * @param body the body (UTF-8 when sent)
 */
public record ConsoleResponse(int status, String contentType, Map<String, String> headers, String body) {

    /**
     * Copies the headers.
     *
     * @param status see above
     * @param contentType see above
     * @param headers see above
     * @param body see above
     * @throws IllegalArgumentException if a component is null
     */
    public ConsoleResponse {
        if (contentType == null || headers == null || body == null) {
            throw new IllegalArgumentException("contentType, headers and body must be given");
        }
        headers = Map.copyOf(headers);
    }

    static ConsoleResponse html(int status, String body) {
        return new ConsoleResponse(status, "text/html; charset=utf-8", Map.of(), body);
    }

    static ConsoleResponse redirect(String location) {
        return new ConsoleResponse(303, "text/plain; charset=utf-8", Map.of("Location", location), "see " + location);
    }
}
