package dev.turnstile.spring.fence;

import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code turnstile.fencing.http.*} properties: the receiving side of fenced HTTP writes. */
@ConfigurationProperties("turnstile.fencing.http")
public class TurnstileFencingProperties {

    /**
     * Whether to refuse requests with a stale fence (Turnstile-Lock and Turnstile-Fence headers) on
     * the guarded paths and methods. Off unless set.
     */
    private boolean enabled;

    /** The request paths to guard, Ant-style, within the context path. */
    private List<String> paths = new ArrayList<>(List.of("/**"));

    /** The HTTP methods to guard; other methods pass unchecked. */
    private List<String> methods = new ArrayList<>(List.of("POST", "PUT", "PATCH", "DELETE"));

    /**
     * The fence table in the application's DataSource (created if missing) when no FenceGate bean
     * is defined.
     */
    private String table = "turnstile_fences";

    /** {@return whether the filter is on} */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets whether the filter is on.
     *
     * @param enabled whether the filter is on
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** {@return the guarded paths} */
    public List<String> getPaths() {
        return paths;
    }

    /**
     * Sets the guarded paths.
     *
     * @param paths Ant-style paths, each starting with {@code /}
     */
    public void setPaths(List<String> paths) {
        this.paths = paths;
    }

    /** {@return the guarded methods} */
    public List<String> getMethods() {
        return methods;
    }

    /**
     * Sets the guarded methods.
     *
     * @param methods HTTP methods
     */
    public void setMethods(List<String> methods) {
        this.methods = methods;
    }

    /** {@return the fence table} */
    public String getTable() {
        return table;
    }

    /**
     * Sets the fence table.
     *
     * @param table a plain identifier, optionally {@code schema.table}
     */
    public void setTable(String table) {
        this.table = table;
    }
}
