#!/usr/bin/env python3
"""Counts, per view-model kind, its lines of behaviour and its lines of ceremony.

    scripts/kind-lines.py [--at REV] [--markdown]

Reads the kinds of this repository (the reference app, Examples/TodoApp, Examples/SearchApp) at
the working tree, or at git revision REV (`--at b3ce78c`). A kind is its class and the files that
extend it (`ProductListViewModel+Paging.swift`). Comments, blank lines, imports and lines that only
close a brace are not counted. Every other line is one of:

  framework  lines that exist for the framework, not the screen: the class line, the kind name,
             `typealias Args`, the factory (from `static func factory` to its closing brace), the
             initializer's signature, the stored dependencies and their assignments;
  ceremony   the rest of what the framework asked for: the context stored and handed around, an
             output written twice (a stored `let … : Property<…>`, `Event<…>`, `LoadTracker`,
             `Command<…>!` and its string name elsewhere), `return nil` at the end of a command,
             `endDeclarations`, `retain`;
  behaviour  everything else: what the screen does.

Two more columns count what the issue of the authoring surface names: closures capturing the
view-model `[unowned self]` (or `[weak self]`), and `derive(…, from: [...])` calls whose sources
are listed by hand.
"""
import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# kind name -> the files of its class, as globs relative to the repository.
KINDS = [
    ("ProductList", ["Sources/ReferenceApp/ProductList/ProductListViewModel*.swift"]),
    ("Login", ["Sources/ReferenceApp/Login/LoginViewModel*.swift"]),
    ("Session", ["Sources/ReferenceApp/Login/Session/SessionViewModel.swift"]),
    ("MenuSubGroup", ["Sources/ReferenceApp/MenuGroups/SubGroup/MenuSubGroupViewModel*.swift"]),
    ("MenuEditGroup", ["Sources/ReferenceApp/MenuGroups/EditGroup/MenuEditGroupViewModel.swift"]),
    ("TodoList", ["Examples/TodoApp/Sources/TodoKinds/TodoListViewModel.swift"]),
    ("TodoEditor", ["Examples/TodoApp/Sources/TodoKinds/TodoEditorViewModel.swift"]),
    ("Search", ["Examples/SearchApp/Sources/SearchKinds/SearchViewModel.swift"]),
    ("Article", ["Examples/SearchApp/Sources/SearchKinds/ArticleViewModel.swift"]),
]

FRAMEWORK = [
    re.compile(r"\bfinal class \w+: ViewModel\b"),
    re.compile(r"\bstatic let kind\s*="),
    re.compile(r"^(public )?typealias Args\b"),
    re.compile(r"^(public )?(convenience )?init\((args|api|session)"),
]
CEREMONY = [
    re.compile(r"\blet context: ViewModelContext\b"),
    re.compile(r"\bself\.context = context\b"),
    re.compile(r"^(public |private |internal )?(private\(set\) )?(let|var) \w+: (Property|Event|LoadTracker|Command)<.*"),
    re.compile(r"^(public |private |internal )?(private\(set\) )?var \w+: Command<.*>!"),
    re.compile(r"^(public )?let loads: LoadTracker$"),
    re.compile(r"\bendDeclarations\(\)"),
    re.compile(r"\bcontext\.retain\("),
]
DEPENDENCY_STORED = re.compile(r"^(public |private |internal )?let (api|cache|session|cooldown|args): ")
DEPENDENCY_ASSIGNED = re.compile(r"^self\.(api|cache|session|cooldown|args) = (api|cache|session|cooldown|args|cooldown \?\? SMSCodeCooldown\(\))$")
CAPTURE = re.compile(r"\[(unowned|weak) self\b")
LISTED = re.compile(r"\bderive\(\w+, from: \[")


def sources(rev, patterns):
    """The text of each file matching `patterns`, at `rev` (None: the working tree)."""
    texts = []
    if rev is None:
        for pattern in patterns:
            for path in sorted(ROOT.glob(pattern)):
                texts.append(path.read_text())
        return texts
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", rev], capture_output=True, text=True, check=True)
    names = listed.stdout.splitlines()
    for pattern in patterns:
        for name in sorted(names):
            if pathlib.PurePath(name).match(pattern):
                shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{name}"], capture_output=True, text=True, check=True)
                texts.append(shown.stdout)
    return texts


def count(texts):
    counts = {"behaviour": 0, "framework": 0, "ceremony": 0, "captures": 0, "listed": 0}
    for text in texts:
        in_factory = False
        depth = 0
        # Brace depth of the file, and the depths at which a `context.command` body began: a
        # `return nil` closing such a body is ceremony (a body with no result had to say so).
        level = 0
        command_bodies = []
        for raw in text.splitlines():
            line = raw.strip()
            opened = level
            level += line.count("{") - line.count("}")
            if "context.command(" in line and line.endswith("in"):
                command_bodies.append(opened)
            while command_bodies and level <= command_bodies[-1]:
                command_bodies.pop()
            if line == "return nil" and command_bodies and opened == command_bodies[-1] + 1:
                counts["ceremony"] += 1
                continue
            counts["captures"] += len(CAPTURE.findall(line))
            counts["listed"] += len(LISTED.findall(line))
            if in_factory:
                counts["framework"] += 1 if line and not line.startswith("//") else 0
                depth += line.count("{") - line.count("}")
                if depth <= 0:
                    in_factory = False
                continue
            if not line or line.startswith("//") or line.startswith("import ") or re.fullmatch(r"[})\]]+[,;]?", line):
                continue
            if re.search(r"\bstatic func factory\b", line):
                counts["framework"] += 1
                depth = line.count("{") - line.count("}")
                in_factory = depth > 0
                continue
            if any(p.search(line) for p in FRAMEWORK) or DEPENDENCY_STORED.search(line) or DEPENDENCY_ASSIGNED.search(line):
                counts["framework"] += 1
            elif any(p.search(line) for p in CEREMONY):
                counts["ceremony"] += 1
            else:
                counts["behaviour"] += 1
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--at", metavar="REV", help="count the kinds at this git revision instead of the working tree")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    options = parser.parse_args()
    rows = []
    for kind, patterns in KINDS:
        texts = sources(options.at, patterns)
        if not texts:
            continue
        rows.append((kind, count(texts)))
    header = ["kind", "behaviour", "framework", "ceremony", "[unowned self]", "sources listed"]
    if options.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for kind, c in rows:
            print(f"| {kind} | {c['behaviour']} | {c['framework']} | {c['ceremony']} | {c['captures']} | {c['listed']} |")
    else:
        print("  ".join(f"{h:>15}" for h in header))
        for kind, c in rows:
            print("  ".join(f"{v:>15}" for v in [kind, c["behaviour"], c["framework"], c["ceremony"], c["captures"], c["listed"]]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
