#!/usr/bin/env python3
"""Reads a JMH JSON result of the Scaling benchmarks and prints, for each pair of `_t1` and
`_t2` rows (and each `Unshared_t2` control against the same `_t1`), the best iteration of
each and their ratio, with the ratio of the means beside it.

This VM's host slows runs down at random and never speeds them up, so over many short
iterations the best one is the rate of the undisturbed machine (as benches/scaling.rs reads
its runs). Usage, after `benches/java/run.sh Scaling` has built the jar:

    java -jar benches/java/target/benchmarks.jar 'Scaling\\.(scram256|oauth|exchange)' \\
        -wi 5 -w 200ms -i 25 -r 200ms -rf json -rff /tmp/scaling.json
    python3 benches/java/scaling_best.py /tmp/scaling.json
"""
import json
import statistics
import sys


def main(path):
    rows = {}
    for r in json.load(open(path)):
        name = r["benchmark"].rsplit(".", 1)[1]
        raw = [x for fork in r["primaryMetric"]["rawData"] for x in fork]
        rows[name] = (max(raw), statistics.mean(raw), len(raw))
    for name in sorted(rows):
        if not name.endswith("_t2"):
            continue
        base = name[: -len("_t2")]
        base = base[: -len("Unshared")] if base.endswith("Unshared") else base
        one = rows.get(base + "_t1")
        if one is None:
            continue
        two = rows[name]
        print(
            f"java/{name}: 1 thread {one[0]:,.0f}/s, 2 threads {two[0]:,.0f}/s, "
            f"{two[0] / one[0]:.2f}x (best iterations of {one[2]} and {two[2]}; "
            f"means {two[1] / one[1]:.2f}x)"
        )


if __name__ == "__main__":
    main(sys.argv[1])
