// The parts of the C ABI (include/vmhost.h) that need no host: its version and the texts of its
// return codes. vmhost_open, vmhost_write and vmhost_close are the Swift side's
// (Sources/VMHostEmbedding, and the app's library for vmhost_open).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE // dladdr
#endif
#include "vmhost.h"

int vmhost_abi_version(void) { return VMHOST_ABI_VERSION; }

const char *vmhost_strerror(int code) {
    switch (code) {
    case VMHOST_OK: return "done";
    case VMHOST_ERR_ARGUMENT: return "a null pointer where one is needed, a negative argc or a write of zero bytes";
    case VMHOST_ERR_USAGE: return "the options are no valid command line of the app";
    case VMHOST_ERR_HANDLE: return "no host has this handle (never opened, or closed already)";
    case VMHOST_ERR_CLOSED: return "the host's input is closed (it is ending or has ended)";
    case VMHOST_ERR_TRACE: return "a file the host writes (--trace, --record) cannot be opened";
    case VMHOST_ERR_FULL: return "the host's queued input is at its bound and the call was made from a callback, where it cannot wait";
    default: return "unknown return code";
    }
}

// The Swift runtime's backtracer installs crash handlers when the runtime is loaded (with the
// library, into a process that is not a Swift program): vmhost.h promises a host never touches the
// process's signal handlers, so they are given back. A handler is the runtime's when it lies in
// libswiftCore (a library linked to the shared runtime) or in this very image (the runtime linked
// statically into the library, which installs no handler of its own).
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "vmhost_runtime.h"

static int is_runtimes(void *handler) {
    Dl_info where, self;
    if (handler == NULL || dladdr(handler, &where) == 0 || where.dli_fname == NULL) return 0;
    if (strstr(where.dli_fname, "libswiftCore") != NULL) return 1;
    return dladdr((void *)&vmhost_abi_version, &self) != 0 && self.dli_fbase == where.dli_fbase;
}

int vmhost_release_runtime_crash_handlers(void) {
    static const int signals[] = {SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV};
    if (getenv("SWIFT_BACKTRACE") != NULL) return 0;
    int released = 0;
    for (size_t index = 0; index < sizeof signals / sizeof signals[0]; index++) {
        struct sigaction action;
        if (sigaction(signals[index], NULL, &action) != 0) continue;
        void *handler = (action.sa_flags & SA_SIGINFO) ? (void *)action.sa_sigaction : (void *)action.sa_handler;
        if (handler == (void *)SIG_DFL || handler == (void *)SIG_IGN || !is_runtimes(handler)) continue;
        struct sigaction standard;
        memset(&standard, 0, sizeof standard);
        standard.sa_handler = SIG_DFL;
        sigemptyset(&standard.sa_mask);
        if (sigaction(signals[index], &standard, NULL) == 0) released++;
    }
    return released;
}

// At load: a shared runtime is a dependency of the library, so its initialisers ran before this
// one. A runtime linked statically into the library may initialise after it: vmhost_open gives
// the handlers back again.
__attribute__((constructor)) static void vmhost_at_load(void) { (void)vmhost_release_runtime_crash_handlers(); }
