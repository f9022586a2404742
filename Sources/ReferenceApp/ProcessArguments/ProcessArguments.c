// The command line, as the Swift standard library asks for it (`CommandLine.arguments`), taken
// from what the C library hands every initialiser of the executable: argc and argv.
//
// Linked statically (scripts/build-release.sh, `--static-swift-stdlib`), the Swift runtime's own
// definition of these functions comes with an initialiser that looks for argv on the stack: it
// reads /proc/self/maps line by line with sscanf (about 50 lines: 117,000 instructions, a seventh
// of a start-up answering one `ping`, and the kernel's work of writing the file) before main,
// whether the program reads its arguments or not. Defined here, in an object file linked before
// the runtime's archive, they keep that archive member (and its initialiser) out of the link.
// With the shared runtime (debug builds) the runtime's own functions are used and these are not.
//
// glibc passes (argc, argv, envp) to every function of the executable's `.init_array`; other C
// libraries may not, so this is glibc only (elsewhere the runtime's definition is linked).
#include <stddef.h>
#if defined(__linux__)
#include <features.h>
#endif
#if defined(__linux__) && defined(__GLIBC__)

static char **arguments;
static int argumentCount;
static char **overridden;
static int overriddenCount;
static char *noArguments[] = {NULL};

static void captureArguments(int argc, char **argv, char **envp) {
    (void)envp;
    arguments = argv;
    argumentCount = argc;
}

__attribute__((section(".init_array"), used))
static void (*const captureArgumentsEntry)(int, char **, char **) = captureArguments;

// The runtime's hook to replace the arguments (a JIT's): the same contract as the runtime's.
__attribute__((swiftcall))
void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc) {
    overridden = argv;
    overriddenCount = argc;
}

__attribute__((swiftcall))
char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    if (overridden) {
        *outArgLen = overriddenCount;
        return overridden;
    }
    if (!arguments) {
        *outArgLen = 0;
        return noArguments;
    }
    *outArgLen = argumentCount;
    return arguments;
}
#endif
