#!/usr/bin/env python3
"""Module dependency graph of a Rust crate, read from its sources; fails on circles.

Each source file is a module (`foo.rs` and `foo/mod.rs` are `foo`). A module depends on
another when it names it in a path: `use crate::a::b::Item`, `super::x`, `crate::a::f()` in an
expression. A path is resolved to the longest module that exists, so naming an item that a
parent re-exports counts as a dependency on the parent. The rules checked:

* no circle among the modules (a parent declaring a child is an edge parent -> child, so a
  child that imports through its parent's re-exports closes a circle);
* no module other than the crate root imports from the crate root (`crate::Item` where Item
  is defined or re-exported by lib.rs).

Usage: modgraph.py SRC_DIR [--list]  (the crate's src/ directory; --list prints the edges)
"""
import re
import sys
from pathlib import Path


def modules(src: Path):
    """Maps module paths (tuples) to files."""
    mods = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts[0] == "bin":
            continue  # src/bin/*: binaries, crates of their own on the library's public API
        if parts[-1] == "mod":
            parts = parts[:-1]
        if parts in (["lib"], ["main"]):
            parts = []
        mods[tuple(parts)] = f
    return mods


def strip(text: str) -> str:
    """The code without comments, strings and `#[cfg(test)] mod tests { ... }` blocks."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    # A raw string starts with r (or br) that is not the end of a word or of a string such as
    # "owner", and ends with a quote followed by as many # as it began with.
    text = re.sub(r'(?<![\w"])b?r(#*)"(?:.|\n)*?"\1', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\])'", "' '", text)
    # Drop unit-test modules: they may import anything from their parent.
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([\w:]+\))?\s+)?mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def use_paths(code: str):
    """Every path of a `use` (groups expanded) and every `crate::`/`super::` path elsewhere."""
    paths = []

    def expand(prefix, body):
        body = body.strip()
        m = re.match(r"^([\w:]*?)(?:::)?\{(.*)\}$", body, re.S)
        if m:
            head = prefix + ([p for p in m.group(1).split("::") if p] if m.group(1) else [])
            depth, cur, items = 0, "", []
            for ch in m.group(2):
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                if ch == "," and depth == 0:
                    items.append(cur)
                    cur = ""
                else:
                    cur += ch
            items.append(cur)
            for it in items:
                if it.strip():
                    expand(head, it)
            return
        body = re.sub(r"\s+as\s+\w+$", "", body)
        paths.append(prefix + [p for p in body.split("::") if p])

    for m in re.finditer(r"\buse\s+([^;]+);", code):
        expand([], m.group(1))
    rest = re.sub(r"\buse\s+[^;]+;", "", code)
    for m in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)", rest):
        paths.append(m.group(1).split("::"))
    return paths


def resolve(path, here, mods, is_dir):
    """The module a path names, or None for external crates."""
    base = list(here)
    parts = list(path)
    if parts[0] == "crate":
        base, parts = [], parts[1:]
    elif parts[0] == "self":
        parts = parts[1:]
    elif parts[0] == "super":
        base = list(here) if is_dir else list(here)
        # `super` of module m (file m.rs or m/mod.rs) is m's parent.
        while parts and parts[0] == "super":
            base = base[:-1]
            parts = parts[1:]
    else:
        # A plain `use name::...`: a child module of `here`, or an external crate.
        if tuple(base + parts[:1]) not in mods:
            return None
    best = tuple(base)
    for i in range(1, len(parts) + 1):
        cand = tuple(base + parts[:i])
        if cand in mods:
            best = cand
        else:
            break
    return best


def graph(src: Path):
    mods = modules(src)
    edges = {m: set() for m in mods}
    root_imports = []
    for m, f in mods.items():
        code = strip(f.read_text())
        for decl in re.finditer(r"^\s*(?:pub(?:\([\w:]+\))?\s+)?mod\s+(\w+)\s*;", code, re.M):
            child = m + (decl.group(1),)
            if child in mods:
                edges[m].add(child)
        for p in use_paths(code):
            t = resolve(p, m, mods, f.name == "mod.rs")
            if t is None or t == m:
                continue
            # An ancestor named only as a path prefix of a child is not a dependency on it.
            edges[m].add(t)
            if t == () and m != ():
                root_imports.append((m, "::".join(p)))
    return mods, edges, root_imports


def cycles(edges):
    """Strongly connected components with more than one module."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return out


def name(m):
    return "crate" if not m else "::".join(m)


def main():
    src = Path(sys.argv[1])
    mods, edges, root = graph(src)
    if "--list" in sys.argv:
        for m in sorted(edges):
            deps = sorted(name(t) for t in edges[m])
            print(f"{name(m)} -> {', '.join(deps) if deps else '(nothing)'}")
    bad = False
    for comp in cycles(edges):
        bad = True
        print("circle:", " <-> ".join(sorted(name(c) for c in comp)), file=sys.stderr)
    for m, p in root:
        bad = True
        print(f"{name(m)} imports {p} from the crate root", file=sys.stderr)
    if bad:
        sys.exit(1)
    print(f"modgraph: {len(mods)} modules of {src}, no circles, nothing imported from the crate root")


if __name__ == "__main__":
    main()
