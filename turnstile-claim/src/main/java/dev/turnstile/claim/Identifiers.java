package dev.turnstile.claim;

import java.util.regex.Pattern;

/** Names that reach a store spliced into a statement (SQL) or a document (field names): identifiers only. */
final class Identifiers {
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
    private static final Pattern TABLE = Pattern.compile("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,62}");

    private Identifiers() {}

    static String column(String what, String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(what + " '" + name + "' is not an identifier: use letters, digits and "
                    + "underscores, starting with a letter or underscore, at most 63 characters (it is spliced into "
                    + "the store's statements, so nothing else is accepted)");
        }
        return name;
    }

    static String table(String name) {
        if (name == null || !TABLE.matcher(name).matches()) {
            throw new IllegalArgumentException("table or collection name '" + name + "' is not an identifier: use "
                    + "letters, digits and underscores, starting with a letter or underscore, at most 63 characters, "
                    + "optionally prefixed by 'schema.'");
        }
        return name;
    }
}
