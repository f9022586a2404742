#!/usr/bin/env python3
"""Writes scripts/startup-order.txt: the functions of vmhost that a start-up runs up to its first
reply (and its exit), with the embedded backend and with an HTTP one, for the linker to place together (`--symbol-ordering-file`, used by
scripts/build-release.sh).

A host touches a few hundred functions spread over megabytes of code before it answers; the
kernel maps each touched page of the binary with its neighbours, so scattered functions cost
resident memory and page faults. Placed together, they cost a fraction (bench/RESULTS.md).

    scripts/startup-order.py [--rewrite] [VMHOST]   (default: .build-release/release/vmhost; needs valgrind)

Run it again after changes to the start-up path: a name that no longer exists is skipped by the
linker, so a stale list only places fewer functions together. It appends the functions the list
lacks to it and keeps the rest as it is: a list written afresh (`--rewrite`) held more memory both
times it was measured (+0.12 MiB idle; +0.08 MiB with an HTTP backend: bench/RESULTS.md).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "scripts", "startup-order.txt")


def main() -> int:
    arguments = sys.argv[1:]
    rewrite = "--rewrite" in arguments
    arguments = [argument for argument in arguments if argument != "--rewrite"]
    binary = arguments[0] if arguments else os.path.join(ROOT, ".build-release/release/vmhost")
    if not shutil.which("valgrind"):
        print("startup-order: valgrind is needed (apt-get install valgrind)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as work:
        # valgrind's reader stops at the toolchain's DWARF 5; the symbols are all it needs.
        copy = os.path.join(work, "vmhost")
        subprocess.run(["strip", "--strip-debug", "-o", copy, binary], check=True)
        ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
        # The C runtime's code a start-up runs before main (the sections of Scrt1.o and crtbeginS.o),
        # which the profile does not name as the binary's: left among the code the linker places
        # unordered, its page costs a 64 KiB window of code resident.
        names: list[str] = ["_start", "frame_dummy"]
        # The default start-up, then one with an HTTP backend it never calls (its client is made
        # at start-up, and must cost no more resident memory than the embedded one's).
        for index, arguments in enumerate([[], ["--backend", "http://127.0.0.1:9"]]):
            profile = os.path.join(work, f"callgrind.{index}.out")
            subprocess.run(
                ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={profile}", copy, *arguments],
                input=ping, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            names += [name for name in functions_of(profile, copy) if name not in names]
    kept: list[str] = []
    if not rewrite and os.path.exists(OUT):
        with open(OUT) as old:
            kept = [line.strip() for line in old if line.strip()]
    known = set(kept)
    added = [name for name in names if name not in known]
    with open(OUT, "w") as out:
        out.write("\n".join(kept + added) + "\n")
    print(f"startup-order: {len(added)} functions added to the {len(kept)} of {os.path.relpath(OUT, ROOT)}",
          file=sys.stderr)
    return 0


def functions_of(profile: str, binary: str) -> list[str]:
    """The names of the functions of `binary` that ran, in the order the profile lists them."""
    objects: dict[str, str] = {}
    functions: dict[str, str] = {}
    names: list[str] = []
    seen: set[str] = set()
    current = None
    definition = re.compile(r"^(ob|cob|fn|cfn)=\((\d+)\)(?: (.*))?$")
    with open(profile) as lines:
        for line in lines:
            match = definition.match(line.rstrip("\n"))
            if not match:
                continue
            kind, number, name = match.groups()
            table = objects if kind in ("ob", "cob") else functions
            if name:
                table[number] = name
            if kind == "ob":
                current = objects[number]
            elif kind == "fn" and current == binary:
                # callgrind marks recursion levels with a quote: f'2.
                function = re.sub(r"'\d+$", "", functions[number])
                if function not in seen and not function.startswith("0x"):
                    seen.add(function)
                    names.append(function)
    return names


if __name__ == "__main__":
    sys.exit(main())
