package dev.turnstile.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Redaction against passwords made of every character that structures a URL. */
class StoreUrlsTest {
    static final String SPECIALS = ":/?#[]@!$&'()*+,;=% \"<>\\^`{|}~";
    static final List<String> USER_INFO = List.of("jdbc:postgresql://u:%s@db.example:5432/app", "jdbc:mysql://root:%s@h:3306/db",
            "jdbc:mariadb://root:%s@h/db?sslMode=verify", "redis://:%s@h:6379/0", "redis://default:%s@h", "rediss://u:%s@h:6380",
            "redis-sentinel://:%s@h:26379#m", "jdbc:postgresql://u:%s@h:notaport/db");
    static final List<String> PARAMS = List.of("jdbc:postgresql://h/db?user=u&password=%s&ssl=true",
            "jdbc:postgresql://h/db?password=%s", "jdbc:h2:tcp://h/x;USER=sa;PASSWORD=%s;MODE=x", "jdbc:mysql://h/db?user=u&pwd=%s",
            "jdbc:postgresql://h/db?sslpassword=%s&user=u",
            // MySQL's multi-factor passwords and key store passwords (attack: password1 was logged in clear)
            "jdbc:mysql://h/db?user=u&password1=%s", "jdbc:mysql://h/db?user=u&password3=%s&x=1",
            "jdbc:mysql://h/db?trustCertificateKeyStorePassword=%s&user=u", "jdbc:mariadb://h/db?keyStorePassword=%s");

    static String password(Random r) {
        List<Character> specials = new ArrayList<>();
        for (char c : SPECIALS.toCharArray()) {
            specials.add(c);
        }
        Collections.shuffle(specials, r);
        StringBuilder b = new StringBuilder("Pw");
        for (char c : specials) {
            b.append((char) ('a' + r.nextInt(26))).append((char) ('A' + r.nextInt(26))).append(c);
        }
        return b.append("Zq").toString();
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    static void assertHidden(String shown, String pw, String url) {
        assertThat(shown).as(url).doesNotContain(pw).doesNotContain(enc(pw));
        for (int i = 0; i + 5 <= pw.length(); i++) {
            assertThat(shown).as(url + ": piece " + pw.substring(i, i + 5)).doesNotContain(pw.substring(i, i + 5));
        }
    }

    @Test
    void userInfoPasswordsAreHiddenRawOrEncoded() {
        Random r = new Random(16);
        for (int n = 0; n < 50; n++) {
            String pw = password(r);
            for (String t : USER_INFO) {
                for (String form : List.of(pw, enc(pw))) {
                    String url = t.replace("%s", form);
                    assertHidden(StoreUrls.redact(url), pw, url);
                    assertHidden(StoreUrls.scrub("driver says: " + url + " / " + form + " / port value : " + form + "@h", url), pw, url);
                }
            }
        }
    }

    @Test
    void parameterPasswordsAreHiddenWhenEncoded() {
        Random r = new Random(17);
        for (int n = 0; n < 50; n++) {
            String pw = password(r);
            for (String t : PARAMS) {
                String url = t.replace("%s", enc(pw));
                assertHidden(StoreUrls.redact(url), pw, url);
                assertHidden(StoreUrls.scrub("echo " + pw + " " + enc(pw), url), pw, url);
            }
        }
    }

    @Test
    void rawSpecialsInUserInfoAreRefusedBeforeAnyDriverSeesThem() {
        for (String url : List.of("jdbc:mariadb://root:pa@ss@h:3306/db", "jdbc:postgresql://u:p/ss@h/db",
                "jdbc:postgresql://u:p?ss@h/db", "jdbc:postgresql://u:p#ss@h/db", "redlock://:a@b@h1:1,:c@h2:2,:d@h3:3")) {
            assertThat(StoreUrls.ambiguousUserInfo(url)).as(url).contains("percent-encode");
            assertThatThrownBy(() -> LockStores.checkUserInfo(url)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageNotContaining("pa@ss").hasMessageNotContaining("p/ss");
        }
        for (String url : List.of("jdbc:mariadb://root:pa%40ss@h:3306/db", "jdbc:postgresql://h:5432/db?user=me@example.com",
                "redlock://:a@h1:1,:b@h2:2,:c@h3:3", "jdbc:postgresql://h/db?user=u&password=a/b@c", "redis://h:6379")) {
            assertThat(StoreUrls.ambiguousUserInfo(url)).as(url).isNull();
        }
    }

    @Test
    void whatIsNoSecretStaysReadable() {
        assertThat(StoreUrls.redact("jdbc:postgresql://h:5432/db?user=me@example.com&ssl=true"))
                .isEqualTo("jdbc:postgresql://h:5432/db?user=me@example.com&ssl=true");
        assertThat(StoreUrls.redact("jdbc:mysql://root@h:3306/db")).isEqualTo("jdbc:mysql://root@h:3306/db");
        assertThat(StoreUrls.scrub("Access denied for user 'root'@'127.0.0.1' (using password: YES)",
                "jdbc:mariadb://h/db?user=root&password=x%2Fy")).isEqualTo("Access denied for user 'root'@'127.0.0.1' (using password: YES)");
        assertThat(StoreUrls.redact("redlock://:a@h1:1,:b@h2:2")).doesNotContain(":a@").doesNotContain(":b@").endsWith("h2:2");
    }
}
