package org.ksasl.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Prints a JMH CSV result file ({@code -rf csv}) as Markdown tables: score ± error and the
 * allocation per operation from {@code -prof gc} when present; for the SCRAM logins also
 * logins per second and the server's and client's shares (from the {@code Scram.Split}
 * counters); for the GSSAPI logins both shares (from the {@code Gssapi.Split} counters).
 * Usage: {@code java -cp target/benchmarks.jar org.ksasl.bench.Table results.csv}.
 */
public final class Table {
    private Table() {}

    public static void main(String[] args) throws IOException {
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        List<String> header = parse(lines.get(0));
        int bench = header.indexOf("Benchmark");
        int score = header.indexOf("Score");
        int error = header.indexOf("Score Error (99.9%)");
        int unit = header.indexOf("Unit");
        List<Integer> params = new ArrayList<>();
        for (int i = 0; i < header.size(); i++) {
            if (header.get(i).startsWith("Param: ")) {
                params.add(i);
            }
        }
        Map<String, List<String>> primary = new LinkedHashMap<>();
        Map<String, Map<String, Double>> secondary = new LinkedHashMap<>();
        for (String line : lines.subList(1, lines.size())) {
            if (line.isBlank()) {
                continue;
            }
            List<String> row = parse(line);
            String name = row.get(bench);
            StringBuilder p = new StringBuilder();
            for (int i : params) {
                if (i < row.size() && !row.get(i).isEmpty()) {
                    p.append(p.length() == 0 ? "" : " ").append(row.get(i));
                }
            }
            int colon = name.indexOf(':');
            String base = colon < 0 ? name : name.substring(0, colon);
            String key = base + "|" + p;
            if (colon < 0) {
                primary.put(key, row);
            } else {
                secondary.computeIfAbsent(key, k -> new LinkedHashMap<>()).put(name.substring(colon + 1),
                        number(row.get(score)));
            }
        }

        System.out.println("| benchmark | param | score | error (99.9%) | unit | alloc B/op |");
        System.out.println("|---|---|---:|---:|---|---:|");
        for (Map.Entry<String, List<String>> e : primary.entrySet()) {
            List<String> row = e.getValue();
            String[] kp = e.getKey().split("\\|", -1);
            String name = shortName(kp[0]);
            if (name.startsWith("Scram.") || name.startsWith("Gssapi.")) {
                continue;
            }
            Map<String, Double> sec = secondary.getOrDefault(e.getKey(), Map.of());
            // A Storm operation is one whole storm; -prof gc's window also takes in the iteration's
            // setup (N first logins, forced GCs), so its allocation per operation is left out.
            Double alloc = name.startsWith("Storm.") ? null : sec.get("gc.alloc.rate.norm");
            System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %s |%n", name, kp[1], fmt(number(row.get(score))),
                    fmt(number(row.get(error))), row.get(unit), alloc == null ? "" : String.format(Locale.ROOT, "%.0f", alloc));
        }

        System.out.println();
        System.out.println("| SCRAM login (4096 iterations) | mechanism | µs/login | error (99.9%) | logins/s | "
                + "server µs/login | server-only logins/s | client µs/login | alloc B/login |");
        System.out.println("|---|---|---:|---:|---:|---:|---:|---:|---:|");
        for (Map.Entry<String, List<String>> e : primary.entrySet()) {
            List<String> row = e.getValue();
            String[] kp = e.getKey().split("\\|", -1);
            String name = shortName(kp[0]);
            if (!name.startsWith("Scram.")) {
                continue;
            }
            double us = number(row.get(score));
            Map<String, Double> sec = secondary.getOrDefault(e.getKey(), Map.of());
            Double alloc = sec.get("gc.alloc.rate.norm");
            Double serverNs = sec.get("serverNs");
            Double logins = sec.get("logins");
            boolean clientOnly = name.contains("ClientOnly");
            String server = "";
            String serverRate = "";
            String client = clientOnly ? fmt(us) : "";
            if (serverNs != null && logins != null && logins > 0) {
                double serverUs = serverNs / logins / 1000;
                server = fmt(serverUs);
                serverRate = String.format(Locale.ROOT, "%,.0f", 1e6 / serverUs);
                client = fmt(us - serverUs);
            }
            System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", name.substring(6), kp[1],
                    fmt(us), fmt(number(row.get(error))),
                    clientOnly ? "" : String.format(Locale.ROOT, "%,.0f", 1e6 / us), server, serverRate, client,
                    alloc == null ? "" : String.format(Locale.ROOT, "%.0f", alloc));
        }

        // GSSAPI logins (Gssapi.Split counts both sides' time), printed only when measured.
        boolean header2 = false;
        for (Map.Entry<String, List<String>> e : primary.entrySet()) {
            List<String> row = e.getValue();
            String name = shortName(e.getKey().split("\\|", -1)[0]);
            if (!name.startsWith("Gssapi.")) {
                continue;
            }
            if (!header2) {
                System.out.println();
                System.out.println("| GSSAPI login | µs/login | error (99.9%) | server µs/login | client µs/login | "
                        + "alloc B/login |");
                System.out.println("|---|---:|---:|---:|---:|---:|");
                header2 = true;
            }
            Map<String, Double> sec = secondary.getOrDefault(e.getKey(), Map.of());
            Double alloc = sec.get("gc.alloc.rate.norm");
            Double logins = sec.get("logins");
            Double serverNs = sec.get("serverNs");
            Double clientNs = sec.get("clientNs");
            boolean counted = logins != null && logins > 0 && serverNs != null && clientNs != null;
            System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %s |%n", name.substring(7),
                    fmt(number(row.get(score))), fmt(number(row.get(error))),
                    counted ? fmt(serverNs / logins / 1000) : "", counted ? fmt(clientNs / logins / 1000) : "",
                    alloc == null ? "" : String.format(Locale.ROOT, "%.0f", alloc));
        }
    }

    /** "org.ksasl.bench.PerCall.gate1_ksasl" -> "PerCall.gate1_ksasl". */
    private static String shortName(String full) {
        return full.substring(full.lastIndexOf('.', full.lastIndexOf('.') - 1) + 1);
    }

    private static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "";
        }
        return String.format(Locale.ROOT, v >= 100 ? "%,.0f" : v >= 10 ? "%.1f" : "%.2f", v);
    }

    private static double number(String s) {
        try {
            return Double.parseDouble(s);
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    /** One CSV line, with double-quoted fields. */
    private static List<String> parse(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    cur.append('"');
                    i++;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    cur.append(c);
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        out.add(cur.toString());
        return out;
    }
}
