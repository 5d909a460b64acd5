package dev.turnstile.jdbc;

import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * Words a database reads as SQL where Turnstile writes an identifier (it writes table and column
 * names unquoted, so the database folds them as it folds any unquoted name: lower case on
 * PostgreSQL, upper case on H2). Most of them only break the statement; a few are worse:
 * PostgreSQL reads a bare {@code user}, {@code current_user} or {@code session_user} as the login
 * name, so {@code user = ?} would silently compare the login name with the value. Such names are
 * refused up front, with the reason.
 */
final class ReservedWords {
    /** Bare words that evaluate to a value instead of naming a column: silently wrong, not an error. */
    private static final Set<String> VALUES = Set.of("user", "current_user", "session_user", "system_user", "current_role",
            "current_catalog", "current_schema", "current_date", "current_time", "current_timestamp", "localtime",
            "localtimestamp", "utc_date", "utc_time", "utc_timestamp", "rownum", "_rowid_");

    private static final Set<String> POSTGRESQL = words("""
            all analyse analyze and any array as asc asymmetric both case cast check collate column constraint create
            current_catalog current_date current_role current_time current_timestamp current_user default deferrable
            desc distinct do else end except false fetch for foreign from grant group having in initially intersect
            into lateral leading limit localtime localtimestamp not null offset on only or order placing primary
            references returning select session_user some symmetric system_user table then to trailing true union
            unique user using variadic when where window with authorization binary collation concurrently cross
            current_schema freeze full ilike inner is isnull join left like natural notnull outer overlaps right
            similar tablesample verbose""");

    private static final Set<String> MARIADB = words("""
            accessible add all alter analyze and as asc asensitive before between bigint binary blob both by call
            cascade case change char character check collate column condition constraint continue convert create
            cross current_date current_role current_time current_timestamp current_user cursor database databases
            day_hour day_microsecond day_minute day_second dec decimal declare default delayed delete desc describe
            deterministic distinct distinctrow div double drop dual each else elseif enclosed escaped except exists
            exit explain false fetch float float4 float8 for force foreign from fulltext general grant group having
            high_priority hour_microsecond hour_minute hour_second if ignore in index infile inner inout insensitive
            insert int int1 int2 int3 int4 int8 integer intersect interval into is iterate join key keys kill leading
            leave left like limit linear lines load localtime localtimestamp lock long longblob longtext loop
            low_priority match maxvalue mediumblob mediumint mediumtext middleint minute_microsecond minute_second
            mod modifies natural not no_write_to_binlog null numeric offset on optimize option optionally or order
            out outer outfile over partition precision primary procedure purge range read reads read_write
            real recursive references regexp release rename repeat replace require resignal restrict return returning
            revoke right rlike row_number rows schema schemas second_microsecond select sensitive separator set show
            signal slow smallint spatial specific sql sqlexception sqlstate sqlwarning sql_big_result
            sql_calc_found_rows sql_small_result ssl starting straight_join table terminated then tinyblob tinyint
            tinytext to trailing trigger true undo union unique unlock unsigned update usage use using utc_date
            utc_time utc_timestamp values varbinary varchar varcharacter varying when where while window with write
            xor year_month zerofill""");

    private static final Set<String> H2 = words("""
            all and any array as asymmetric authorization between both case cast check constraint cross
            current_catalog current_date current_path current_role current_schema current_time current_timestamp
            current_user day default distinct else end except exists false fetch for foreign from full group groups
            having hour if ilike in inner intersect interval is join key leading left like limit localtime
            localtimestamp minus minute month natural not null offset on or order over partition primary qualify
            range regexp right row rownum rows second select session_user set some symmetric system_user table to top
            trailing true uescape union unique unknown user using value values when where window with year _rowid_""");

    private static final Set<String> SQLITE = words("""
            add all alter and as autoincrement between case check collate commit constraint create
            current_date current_time current_timestamp default deferrable delete distinct drop else escape except
            exists foreign from group having in index insert intersect into is isnull join limit not notnull null on
            or order primary references returning select set table then to transaction union unique update using
            values when where""");

    private static final Set<String> ANY;

    static {
        Set<String> all = new TreeSet<>(POSTGRESQL);
        all.addAll(MARIADB);
        all.addAll(H2);
        all.addAll(SQLITE);
        all.addAll(VALUES);
        ANY = Set.copyOf(all);
    }

    private ReservedWords() {}

    private static Set<String> words(String text) {
        return Set.of(text.strip().split("\\s+"));
    }

    private static Set<String> of(String dialectId) {
        return switch (dialectId) {
            case "postgresql" -> POSTGRESQL;
            case "mariadb" -> MARIADB;
            case "h2" -> H2;
            case "sqlite" -> SQLITE;
            default -> ANY;
        };
    }

    /**
     * Refuses an identifier (or each part of {@code schema.table}) that the database reads as SQL.
     *
     * @param what what the name is, for the message ("filter column", "task table")
     * @param name the identifier, already checked to be letters, digits and underscores
     * @param dialectId the dialect's id, or null for every supported database (the lock table,
     *     named before the database is known)
     * @throws IllegalArgumentException if it is reserved
     */
    @SuppressWarnings("StringSplitter") // names are validated identifiers by now: no empty parts to keep
    static void check(String what, String name, @Nullable String dialectId) {
        for (String part : name.split("\\.")) {
            String w = part.toLowerCase(Locale.ROOT);
            Set<String> reserved = dialectId == null ? ANY : of(dialectId);
            if (VALUES.contains(w) || reserved.contains(w)) {
                String where = dialectId == null ? "in SQL (PostgreSQL, MariaDB/MySQL, H2 or SQLite)" : "in " + dialectId;
                throw new IllegalArgumentException(what + " '" + name + "': '" + part + "' is a reserved word " + where
                        + (VALUES.contains(w) ? ", read as a value (the login name, the date…) rather than a column, so a "
                                + "test on it would silently compare that value" : "")
                        + ". Turnstile writes names unquoted: rename it (for example " + part + "_name or " + part + "s), "
                        + "or give a view with another name");
            }
        }
    }
}
