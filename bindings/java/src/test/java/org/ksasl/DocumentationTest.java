package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Native.java documented an argument that did not exist (":14", a {@code hasExpiry}) and 100
 * of its 109 native methods had no doc comment: every native method has one, and no comment
 * names ({@code {@code x}}) a parameter of another native that its own method does not have.
 */
class DocumentationTest {
    private static final Pattern NATIVE = Pattern.compile(
            "(/\\*\\*((?:(?!\\*/).)*)\\*/\\s*)?static native [^(]+ (\\w+)\\(([^)]*)\\)", Pattern.DOTALL);
    private static final Pattern CODE = Pattern.compile("\\{@code (\\w+)\\}");

    record Method(String name, String doc, Set<String> params) {}

    static List<Method> natives() throws Exception {
        String src = Files.readString(Path.of("src/main/java/org/ksasl/Native.java"));
        List<Method> out = new ArrayList<>();
        Matcher m = NATIVE.matcher(src);
        while (m.find()) {
            Set<String> params = new HashSet<>();
            for (String p : m.group(4).split(",")) {
                String[] words = p.trim().split("\\s+");
                if (words.length >= 2) {
                    params.add(words[words.length - 1]);
                }
            }
            out.add(new Method(m.group(3), m.group(2), params));
        }
        return out;
    }

    @Test
    void everyNativeMethodIsDocumentedWithItsOwnArguments() throws Exception {
        List<Method> natives = natives();
        assertTrue(natives.size() > 150, "found " + natives.size() + " native methods");
        Set<String> allParams = new HashSet<>();
        natives.forEach(n -> allParams.addAll(n.params()));
        List<String> problems = new ArrayList<>();
        for (Method n : natives) {
            if (n.doc() == null || n.doc().isBlank()) {
                problems.add(n.name() + ": no doc comment");
                continue;
            }
            Matcher c = CODE.matcher(n.doc());
            while (c.find()) {
                String word = c.group(1);
                if (allParams.contains(word) && !n.params().contains(word)) {
                    problems.add(n.name() + ": documents {@code " + word + "}, which is not its parameter");
                }
            }
        }
        assertEquals(List.of(), problems);
    }

    @Test
    void theClassCommentDescribesTheCredentialAnswerArguments() throws Exception {
        String src = Files.readString(Path.of("src/main/java/org/ksasl/Native.java"));
        String header = src.substring(0, src.indexOf("final class Native"));
        Set<String> named = new HashSet<>();
        Matcher c = CODE.matcher(header);
        while (c.find()) {
            named.add(c.group(1));
        }
        assertEquals(Set.of("kind", "value", "expiryMs", "owner"), named);
        int answering = 0;
        for (Method n : natives()) {
            if (n.name().endsWith("Provide") || n.name().equals("lookupAnswer")) {
                assertTrue(n.params().containsAll(named), n.toString());
                answering++;
            }
        }
        assertEquals(3, answering);
    }
}
