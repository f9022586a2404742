#!/usr/bin/env bash
# AddressSanitizer and LeakSanitizer over the C ABI of include/vmhost.h (protocol/embedding.md):
#   1. libvmhost-embedded built with -sanitize=address (swift build --sanitize=address, into
#      .build-asan; no flag in Package.swift);
#   2. Tests/Embedding/cycles.c, built with the toolchain's clang and -fsanitize=address, runs
#      VMHOST_SANITIZE_CYCLES (default 1000) open/use/close cycles with the hostile calls between
#      them (null callback, zero-length write, write after close, closing twice, ...); LeakSanitizer
#      checks the process at its exit;
#   3. clients/c/example.c the same way (log in, list products);
#   4. the ctypes replayer of every conformance transcript (clients/python/tests/test_embedded.py),
#      the hostile-use tests (Tests/Embedding/test_hostile.py) and the generative fuzzer's streams
#      through the ABI (Tests/Hardening/test_fuzz.py, its embedded configurations) in a Python that
#      has the ASan runtime preloaded, on the sanitized library. A leak fails the process (status 23).
# Any report fails the script; the reports are in .build-asan/logs/.
#
#   scripts/sanitize-embedded.sh [--build-only]   (--build-only: step 1 alone; scripts/test.sh runs
#                                                  it in the background while other suites run)
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-asan
mkdir -p "$scratch/logs"
swift build --product vmhost-embedded --sanitize=address --scratch-path "$scratch"
if [ "${1:-}" = --build-only ]; then exit 0; fi
lib=$PWD/$scratch/debug
# The toolchain's clang: the same sanitizer runtime as the Swift code was built for.
clang=$(dirname "$(readlink -f "$(command -v swift)")")/clang
runtime=$("$clang" -print-file-name=libclang_rt.asan-x86_64.so)
cflags=(-fsanitize=address -fuse-ld=lld -fno-omit-frame-pointer -g -O1 -ISources/CVMHost/include
        -L"$lib" -lvmhost-embedded -Wl,-rpath,"$lib")
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0

"$clang" "${cflags[@]}" -o "$scratch/cycles" Tests/Embedding/cycles.c -lpthread
cycles=${VMHOST_SANITIZE_CYCLES:-1000}
echo "sanitize: $cycles open/use/close cycles from C"
"$scratch/cycles" "$cycles" 2> "$scratch/logs/cycles.log" || { tail -n 60 "$scratch/logs/cycles.log"; exit 1; }

"$clang" "${cflags[@]}" -o "$scratch/example" clients/c/example.c -ljansson -lpthread
echo "sanitize: clients/c/example.c"
"$scratch/example" > "$scratch/logs/example.out" 2> "$scratch/logs/example.log" \
    || { tail -n 60 "$scratch/logs/example.log"; exit 1; }

echo "sanitize: every conformance transcript, the hostile-use tests and the fuzzer's streams through ctypes"
PATH="$PWD/.venv/bin:$PATH" LD_PRELOAD="$runtime" PYTHONMALLOC=malloc VMHOST_LIBRARY="$lib/libvmhost-embedded.so" \
    PYTHONPATH="$PWD/clients/python" python3 -m pytest -q -p no:cacheprovider \
    clients/python/tests/test_embedded.py Tests/Embedding/test_hostile.py \
    Tests/Hardening/test_fuzz.py::test_generated_frames_never_break_the_embedded_host > "$scratch/logs/python.log" 2>&1 \
    || { grep -E "passed|failed|ERROR|SUMMARY" "$scratch/logs/python.log" | tail -n 20; tail -n 60 "$scratch/logs/python.log"; exit 1; }
grep -E "passed|failed" "$scratch/logs/python.log" | tail -n 1
if grep -l "ERROR: AddressSanitizer\|ERROR: LeakSanitizer" "$scratch"/logs/*; then exit 1; fi
echo "sanitize: clean"
