#!/usr/bin/env python3
"""Writes tests/vectors/config_table.json as a C header for tests/c/test_config_table.c: one
`table_case` per entry, valid ones first, each with the report text expected before its warning
lines (run by mk/ctest.mk at build time)."""
import json
import sys


def c_string(s):
    if s is None:
        return "NULL"
    out = []
    for b in s.encode("utf-8"):
        c = chr(b)
        if c == '"' or c == "\\":
            out.append("\\" + c)
        elif c == "?":
            out.append("\\?")  # no trigraphs
        elif 0x20 <= b < 0x7F:
            out.append(c)
        else:
            out.append("\\%03o" % b)
    return '"' + "".join(out) + '"'


def main():
    table = json.load(open(sys.argv[1]))
    print("/* Generated from tests/vectors/config_table.json by tests/c/config_table.py. */")
    print("static const table_case TABLE_CASES[] = {")
    for e in table["valid"]:
        listener = e.get("listener") if e["side"] == "server" else None
        scope = "client" if listener is None else "listener " + listener
        lines = ["[%s]" % scope]
        lines += ["%s=%s" % (k, v) for k, v in e["effective"]]
        lines += ["unknown " + u for u in e.get("unknown", [])]
        expected = "".join(line + "\n" for line in lines)
        print("    {%s, %s, %s, %s, NULL, %d}," % (
            c_string(e["name"]), c_string(e["properties"]), c_string(listener),
            c_string(expected), e.get("warnings", 0)))
    for e in table["invalid"]:
        listener = e.get("listener") if e["side"] == "server" else None
        print("    {%s, %s, %s, NULL, %s, 0}," % (
            c_string(e["name"]), c_string(e["properties"]), c_string(listener),
            c_string(e["error"])))
    print("};")


if __name__ == "__main__":
    main()
