#!/usr/bin/env python3
"""Writes tests/vectors/config_invalid.json as a C header for tests/c/test_config.c: one
`config_case` per case, in the JSON's order (run by mk/ctest.mk at build time)."""
import json
import sys


def c_string(s):
    return json.dumps(s)  # a JSON string of printable ASCII is a valid C string literal


def value(v):
    if v is None:
        return "{'n', 0, 0, NULL}"
    if isinstance(v, bool):
        raise SystemExit(f"config_cases.py: booleans are not handled: {v!r}")
    if isinstance(v, int):
        return f"{{'i', INT64_C({v}), 0, NULL}}"
    if isinstance(v, float):
        return f"{{'d', 0, {v!r}, NULL}}"
    if isinstance(v, str):
        return f"{{'s', 0, 0, {c_string(v)}}}"
    raise SystemExit(f"config_cases.py: unexpected value {v!r}")


def main():
    cases = json.load(open(sys.argv[1]))["cases"]
    print("/* Generated from tests/vectors/config_invalid.json by tests/c/config_cases.py. */")
    print("static const config_case CONFIG_CASES[] = {")
    for c in cases:
        v = c["value"]
        args = v if isinstance(v, list) else [v]
        if len(args) > 3:
            raise SystemExit("config_cases.py: more than 3 values")
        vals = ", ".join(value(a) for a in args) or "{'n', 0, 0, NULL}"
        print(f"    {{{c_string(c['config'])}, {c_string(c['set'])}, {c_string(c['code'])}, "
              f"{int(isinstance(v, list))}, {len(args)}, {{{vals}}}}},")
    print("};")


main()
