#ifndef VMHOST_CLIBFUZZER_H
#define VMHOST_CLIBFUZZER_H
#include <stddef.h>
#include <stdint.h>

/* libFuzzer's driver (compiler-rt, LLVM 11 and later), linked in by `-sanitize=fuzzer`: runs the
 * fuzzing loop with libFuzzer's command-line flags, calling `callback` once per input. vmhost-fuzz
 * calls it from its own `main` (SwiftPM gives every executable target a Swift `main`, so libFuzzer's
 * is not used). Only a declaration: nothing references it unless FUZZING is defined. */
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
