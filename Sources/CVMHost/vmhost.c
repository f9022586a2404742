// The parts of the C ABI (include/vmhost.h) that need no host: its version and the texts of its
// return codes. vmhost_open, vmhost_write and vmhost_close are the Swift side's
// (Sources/VMHostEmbedding, and the app's library for vmhost_open).
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
