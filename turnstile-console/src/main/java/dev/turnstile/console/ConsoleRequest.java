package dev.turnstile.console;

import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One request to the {@link Console}, as the server that received it hands it over. The server
 * has already decided who the user is and checked the request's CSRF token where it has one of its
 * own (Spring Security); the console checks it again against {@link #csrf} on every action.
 *
 * @param method the HTTP method, e.g. {@code GET}
 * @param path the path below the console's base path, starting with {@code /} ({@code /} for the
 *     locks page, {@code /release}, {@code /history}, {@code /static/console.css})
 * @param parameters the query parameters of a {@code GET}, or the form fields of a {@code POST}
 *     (first value of each)
 * @param basePath the absolute path the console is served under, without a trailing slash
 *     ({@code ""} at the root, {@code /actuator/turnstile-console} in an application); links are
 *     built on it
 * @param user who asked, as the server authenticated them, or {@code null} if nobody signed in
 * @param remoteAddress the client's address, for the audit record
 * @param origin the request's {@code Origin} header, or {@code null}
 * @param host the request's {@code Host} header, or {@code null}
 * @param csrf the CSRF field that forms must carry and actions must match, or {@code null}
 *     when the server gives none (then the console refuses every action)
 * @param formFields further hidden fields every form must carry for the server's own checks (Spring
 *     Security's {@code _csrf}, which it checks before the console sees the request); usually empty
 */
public record ConsoleRequest(String method, String path, Map<String, String> parameters, String basePath,
        @Nullable String user, String remoteAddress, @Nullable String origin, @Nullable String host,
        @Nullable CsrfField csrf, Map<String, String> formFields) {

    /**
     * Copies the parameters, so a request cannot change under the console.
     *
     * @param method see above
     * @param path see above
     * @param parameters see above
     * @param basePath see above
     * @param user see above
     * @param remoteAddress see above
     * @param origin see above
     * @param host see above
     * @param csrf see above
     * @param formFields see above
     * @throws IllegalArgumentException if a component that must be given is null
     */
    public ConsoleRequest {
        if (method == null || path == null || parameters == null || basePath == null || remoteAddress == null
                || formFields == null) {
            throw new IllegalArgumentException("method, path, parameters, basePath, remoteAddress and formFields must be given");
        }
        parameters = Map.copyOf(parameters);
        formFields = Map.copyOf(formFields);
    }

    /**
     * The CSRF token a form must post back: its field name and value.
     *
     * @param name the form field's name, e.g. {@code _csrf}
     * @param value the token
     */
    public record CsrfField(String name, String value) {}
}
