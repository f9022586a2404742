#!/usr/bin/env python3
"""Counts the public declarations of each library product of the root package, per module.

Usage:
    scripts/public-api.py [--at REV] [--list] [--product NAME]

Without --at the working tree is read; with --at REV every file is read from that commit
(`git ls-tree`, `git show`), so the count can be taken at any point of the history.

What is counted
---------------
A product's modules: the local Swift targets in the dependency closure of its target, read from
Package.swift (`.library(name: …, targets: […])`, then each `.target(name: …, dependencies: […])`).
Every one of them can be imported by a package that depends on the product, so all are counted;
the table marks with `*` the modules `import VMHost` brings by itself (the product's own module
and those it `@_exported import`s). A later product (VMHostTesting) counts only the modules an
earlier one (VMHost) did not.

In each module's .swift files (comments, string literals and `#if` lines removed first), a
declaration is one of the keywords func, var, let, init, subscript, class, struct, enum, protocol,
actor, typealias, associatedtype, macro. It counts when it is public:
  - declared `public` or `open` (a setter's `public(set)` is not an access level), or
  - a member with no access level of a `public extension`, or a requirement of a public protocol
    (including its associated types);
and when everything it is declared in is public too (a `public` member of an internal type, or of
an extension of an internal type of the same module, is not public surface).
Not counted: anything marked `@_spi(…)` (or declared inside something so marked), `package`,
`internal`, `fileprivate`, `private`; enum cases (their enum is counted); extensions themselves
(their members are); imports, including `public import`; local declarations inside bodies. A
`var a, b` with several bindings counts once.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCTS = ["VMHost", "VMHostTesting", "VMHostEmbedding", "VMHostHTTP"]

DECL_KEYWORDS = {
    "func", "var", "let", "init", "subscript", "class", "struct", "enum", "protocol", "actor",
    "typealias", "associatedtype", "macro", "extension", "case", "import", "deinit", "operator",
    "precedencegroup",
}
TYPE_KEYWORDS = {"class", "struct", "enum", "protocol", "actor", "extension"}
NOT_COUNTED = {"extension", "case", "import", "deinit", "operator", "precedencegroup"}
ACCESS = {"public", "open", "package", "internal", "fileprivate", "private"}
MODIFIERS = {
    "static", "class", "final", "override", "mutating", "nonmutating", "nonisolated", "convenience",
    "required", "dynamic", "lazy", "weak", "unowned", "indirect", "optional", "prefix", "postfix",
    "infix", "consuming", "borrowing", "distributed", "isolated", "unsafe",
}


# MARK: Reading files, at a revision or in the working tree


class Tree:
    def __init__(self, rev: str | None):
        self.rev = rev

    def read(self, path: str) -> str | None:
        if self.rev is None:
            file = ROOT / path
            return file.read_text(encoding="utf-8") if file.is_file() else None
        done = subprocess.run(["git", "show", f"{self.rev}:{path}"], cwd=ROOT, capture_output=True)
        return done.stdout.decode("utf-8") if done.returncode == 0 else None

    def swift_files(self, folder: str) -> list[str]:
        if self.rev is None:
            base = ROOT / folder
            return sorted(str(p.relative_to(ROOT)) for p in base.rglob("*.swift")) if base.is_dir() else []
        done = subprocess.run(["git", "ls-tree", "-r", "--name-only", self.rev, "--", folder + "/"],
                              cwd=ROOT, capture_output=True, text=True, check=True)
        return sorted(line for line in done.stdout.splitlines() if line.endswith(".swift"))


# MARK: The manifest


def calls(text: str, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """The argument text of every `.name(` call of `names`, with its name (parentheses balanced)."""
    found = []
    for match in re.finditer(r"\.(%s)\(" % "|".join(names), text):
        depth, index = 1, match.end()
        while depth and index < len(text):
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            index += 1
        found.append((match.group(1), text[match.end():index - 1]))
    return found


@dataclass
class Target:
    name: str
    path: str
    dependencies: list[str]


def manifest(tree: Tree) -> tuple[dict[str, list[str]], dict[str, Target]]:
    text = strip_swift(tree.read("Package.swift") or "", keep_strings=True)
    products = {}
    for _, args in calls(text, ("library",)):
        name = re.search(r'name:\s*"([^"]+)"', args).group(1)
        products[name] = re.findall(r'"([^"]+)"', re.search(r"targets:\s*\[([^\]]*)\]", args).group(1))
    targets = {}
    for kind, args in calls(text, ("target", "executableTarget", "systemLibrary")):
        name = re.search(r'name:\s*"([^"]+)"', args).group(1)
        path = re.search(r'path:\s*"([^"]+)"', args)
        deps = re.search(r"dependencies:\s*\[(.*?)\]", args, re.S)
        # `.product(name: "Logging", package: …)` names another package's module: not ours.
        local = re.sub(r"\.product\([^)]*\)", "", deps.group(1)) if deps else ""
        swift = kind != "systemLibrary"
        targets[name] = Target(name, path.group(1) if path else f"Sources/{name}",
                               re.findall(r'"([^"]+)"', local) if swift else [])
    return products, targets


def closure(names: list[str], targets: dict[str, Target]) -> list[str]:
    seen: list[str] = []
    stack = list(names)
    while stack:
        name = stack.pop(0)
        if name in seen or name not in targets:
            continue
        seen.append(name)
        stack.extend(targets[name].dependencies)
    return seen


# MARK: Scanning Swift


def strip_swift(text: str, keep_strings: bool = False) -> str:
    """The text without comments and (unless kept) string literals' contents, lines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        out.append("\n")
                    i += 1
        elif c == '"' or (c == "#" and re.match(r'#+"', text[i:])):
            hashes = len(re.match(r"#*", text[i:]).group(0))
            start = i
            i += hashes
            multi = text.startswith('"""', i)
            quote = '"""' if multi else '"'
            i += len(quote)
            close = quote + "#" * hashes
            while i < n and not text.startswith(close, i):
                if text[i] == "\\" and hashes == 0:
                    i += 1
                    # An interpolation may hold strings of its own: skip it balanced.
                    if i < n and text[i] == "(":
                        depth, i = 1, i + 1
                        while i < n and depth:
                            depth += {"(": 1, ")": -1}.get(text[i], 0)
                            i += 1
                        continue
                i += 1
            i += len(close)
            literal = text[start:i]
            out.append(literal if keep_strings else '""' + "\n" * literal.count("\n"))
        else:
            out.append(c)
            i += 1
    lines = "".join(out).split("\n")
    # Compiler directives (`#if canImport(Glibc)`): not declarations; both branches are scanned.
    return "\n".join("" if re.match(r"\s*#(if|elseif|else|endif)\b", line) else line for line in lines)


TOKEN = re.compile(r"@\w+|`\w+`|\w+|\S")


def is_class_declaration(tokens: list[tuple[str, int]], i: int) -> bool:
    """`class Name`, not the modifier of `class func` or `class var`."""
    following = tokens[i + 1][0] if i + 1 < len(tokens) else ""
    return not (following in DECL_KEYWORDS or following in ACCESS or following in MODIFIERS)


@dataclass
class Scope:
    kind: str  # "top", "type", "protocol", "extension", "body"
    public: bool  # its public members are public surface
    spi: bool
    default_public: bool  # members without an access level are public (public extension, public protocol)
    name: str = ""


@dataclass
class Declaration:
    module: str
    file: str
    line: int
    keyword: str
    name: str
    counted: bool
    why: str = ""
    extends: str | None = None  # for members of an extension: the extended type's first name


@dataclass
class Scan:
    declarations: list[Declaration] = field(default_factory=list)
    types: dict[str, bool] = field(default_factory=dict)  # a type of the module → is it public


def scan(module: str, path: str, text: str, result: Scan) -> None:
    source = strip_swift(text)
    tokens = [(m.group(0), source.count("\n", 0, m.start()) + 1) for m in TOKEN.finditer(source)]
    stack = [Scope("top", True, False, False)]
    pending: list[str] = []  # modifiers and attributes seen since the last other token
    spi_pending = False
    opening: Scope | None = None  # the scope the next `{` opens (a type's or a body)
    i = 0
    while i < len(tokens):
        token, line = tokens[i]
        scope = stack[-1]
        if token == "{":
            stack.append(opening or Scope("body", False, False, False))
            opening = None
            pending, spi_pending = [], False
        elif token == "}":
            if len(stack) > 1:
                stack.pop()
            opening = None
            pending, spi_pending = [], False
        elif scope.kind == "body":
            pass
        elif token.startswith("@"):
            if token == "@_spi":
                spi_pending = True
            # An attribute's arguments: `@_spi(TestKit)`, `@available(…)`.
            if i + 1 < len(tokens) and tokens[i + 1][0] == "(":
                depth, i = 0, i + 1
                while i < len(tokens):
                    depth += {"(": 1, ")": -1}.get(tokens[i][0], 0)
                    if depth == 0:
                        break
                    i += 1
        elif (token in ACCESS or token in MODIFIERS) and not (token == "class" and is_class_declaration(tokens, i)):
            following = tokens[i + 1][0] if i + 1 < len(tokens) else ""
            if following == "(":  # `private(set)`, `nonisolated(unsafe)`: not the declaration's access
                i += 3
            elif following in DECL_KEYWORDS or following in ACCESS or following in MODIFIERS or following.startswith("@"):
                pending.append(token)
            else:  # an identifier named like a modifier (`let open = …`)
                pending, spi_pending = [], False
        elif token in DECL_KEYWORDS and not (i > 0 and tokens[i - 1][0] == "."):
            following = tokens[i + 1][0] if i + 1 < len(tokens) else ""
            if re.match(r"`?\w", following):
                name = following.strip("`")
            else:  # an operator: `static func == (`
                name = "".join(t for t, _ in tokens[i + 1:i + 4] if not re.match(r"[\w(<]", t)) or token
            access = next((m for m in pending if m in ACCESS), None)
            spi = spi_pending or scope.spi
            if access is not None:
                is_public = access in ("public", "open")
            else:
                is_public = scope.default_public
            visible = is_public and scope.public
            if token == "extension":
                extended = re.match(r"\w+", following).group(0) if following else ""
                opening = Scope("extension", True, spi, is_public, extended)
                pending, spi_pending = [], False
                i += 1
                continue
            if token in TYPE_KEYWORDS:
                qualified = ".".join([s.name for s in stack if s.name] + [name])
                if scope.kind in ("top", "type") and token != "protocol":
                    result.types.setdefault(qualified, visible and not spi)
                if scope.kind == "top":
                    result.types.setdefault(name, visible and not spi)
                opening = Scope("protocol" if token == "protocol" else "type", visible, spi,
                                token == "protocol" and visible, name)
            else:
                opening = None
            if token not in NOT_COUNTED:
                extends = next((s.name for s in reversed(stack) if s.kind == "extension"), None)
                why = "spi" if spi else ("" if visible else (access or "internal"))
                result.declarations.append(
                    Declaration(module, path, line, token, name, visible and not spi, why, extends))
            pending, spi_pending = [], False
        else:
            pending, spi_pending = [], False
        i += 1


def count(tree: Tree, modules: list[tuple[str, str]]) -> dict[str, list[Declaration]]:
    found: dict[str, list[Declaration]] = {}
    for module, folder in modules:
        result = Scan()
        for path in tree.swift_files(folder):
            scan(module, path, tree.read(path) or "", result)
        for declaration in result.declarations:
            # A member of an extension of one of the module's own non-public types is not public.
            if declaration.counted and declaration.extends and result.types.get(declaration.extends) is False:
                declaration.counted = False
                declaration.why = f"extends non-public {declaration.extends}"
        found[module] = result.declarations
    return found


def exported(tree: Tree, folder: str) -> set[str]:
    names = set()
    for path in tree.swift_files(folder):
        names.update(re.findall(r"^\s*@_exported\s+(?:public\s+)?import\s+(\w+)", tree.read(path) or "", re.M))
    return names


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog=__doc__.split("What is counted\n---------------\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--at", metavar="REV", help="read the files of this commit (default: the working tree)")
    parser.add_argument("--list", action="store_true", help="also list every counted declaration")
    parser.add_argument("--product", action="append", help="only this product (repeatable)")
    args = parser.parse_args()

    tree = Tree(args.at)
    products, targets = manifest(tree)
    label = args.at or "working tree"
    print(f"Public declarations at {label}")
    counted: set[str] = set()
    grand = 0
    for product in args.product or PRODUCTS:
        if product not in products:
            print(f"\n{product}: no such product")
            continue
        modules = [name for name in closure(products[product], targets) if name not in counted]
        swift_modules = [(m, targets[m].path) for m in modules if tree.swift_files(targets[m].path)]
        umbrella = products[product][0]
        direct = {umbrella} | exported(tree, targets[umbrella].path)
        results = count(tree, swift_modules)
        print(f"\nproduct {product}")
        print(f"  {'module':<22}{'public':>8}")
        total = reachable = 0
        for module, _ in swift_modules:
            number = sum(d.counted for d in results[module])
            total += number
            if module in direct:
                reachable += number
            mark = "*" if module in direct else " "
            print(f"  {mark} {module:<20}{number:>8}")
            if args.list:
                for d in results[module]:
                    if d.counted:
                        print(f"        {d.file}:{d.line}: {d.keyword} {d.name}")
        print(f"  {'total':<22}{total:>8}")
        if reachable != total:
            print(f"  (* through `import {umbrella}` alone: {reachable})")
        counted.update(modules)
        grand += total
    print(f"\nall products{grand:>20}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
