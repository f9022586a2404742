/*
 * vmhost.h: an app's view-model host in the caller's process, through a C ABI.
 *
 * The JSON-RPC 2.0 protocol that `vmhost` speaks on stdin and stdout (protocol/SPEC.md), byte for
 * byte, through function calls: open a host with the options of its command line, write the bytes
 * a client would write to its stdin, receive every message it would write to its stdout through a
 * callback, close it as a client closes stdin. For shells that cannot or would rather not start a
 * process (iOS, Android, Flutter, React Native, Electron, Qt), and for any language with a C FFI.
 * The guide is protocol/embedding.md.
 *
 * A library that exports this ABI serves one app: the reference app's is libvmhost-embedded (the
 * kinds and options of `vmhost`); an app builds its own from its server (docs/Guide-embedding.md).
 *
 * THREADS
 *   - Every host of the process lives on vmhost's host thread (one logical thread for all hosts).
 *     Every function below may be called from any thread, at any time, for any host, concurrently.
 *   - Callbacks (on_message, on_log) are called one at a time across every host of the process,
 *     never two at once, on the thread that runs the hosts at that moment: either vmhost's own
 *     thread (output of work that completes later: a command, a timer), or the thread calling
 *     vmhost_write, vmhost_open or vmhost_close, before that call returns. When the host thread is
 *     idle (nothing queued for it), vmhost_write handles the bytes on the calling thread and the
 *     replies they cause are delivered before it returns; when it is busy, the bytes are copied
 *     and queued, and their replies come later, from whichever thread runs the hosts then.
 *   - A vmhost_write runs the work of its own bytes only: never the bytes queued for another host
 *     (nor those queued for its own, which the host thread runs first, in order). So a write
 *     returns after handling its own bytes, or after copying them when the host thread is busy,
 *     however much another host is sent from another thread.
 *   - Back-pressure: a host holds at most 8 MiB of input queued and not handled (as vmhost reads
 *     stdin ahead by at most 8 MiB; a single larger write is taken once nothing is queued). Past
 *     it, vmhost_write waits until the host has handled enough of its own queue (it waits for that
 *     host alone); from inside a callback, where it cannot wait, it returns VMHOST_ERR_FULL.
 *     So: never call vmhost_write or vmhost_close while holding a lock that your callback takes.
 *   - Writing from inside a callback is allowed (vmhost_write, for this host or another): the bytes
 *     are queued and handled after the callback returns, in order. vmhost_open from inside a callback
 *     opens at once. vmhost_close from inside a callback ends the input and returns at once (see
 *     vmhost_close).
 *   - A callback that takes long delays every host of the process (nothing is lost: they wait).
 *     A callback must return: never longjmp or throw across it.
 *
 * BUFFERS
 *   - argv and its strings: read during vmhost_open only.
 *   - The bytes of vmhost_write: read during the call only; reuse or free them when it returns.
 *   - The message given to on_message and the line given to on_log: owned by vmhost, valid only until
 *     the callback returns, not NUL-terminated (use the length). Copy what you keep.
 *   - context: never read by vmhost; passed back to every callback as given. It must stay valid
 *     until the host's last call of on_message (bytes NULL, length 0) has returned.
 *
 * SEVERAL HOSTS
 *   Any number of hosts may be open at once in one process; each has its own view-models, handles,
 *   subscriptions, locale, clock and app state (its own login). They share the host thread, and, with
 *   --state-dir, the state directory (made for several hosts).
 *
 * A host never calls exit, never reads stdin, never writes stdout or stderr, never touches the
 * process's signal handlers, and logs only through on_log.
 */
#ifndef VMHOST_H
#define VMHOST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this ABI; vmhost_abi_version() of a library built to this header returns it. */
#define VMHOST_ABI_VERSION 1

/* A host, as vmhost_open made it. Handles are never reused in a process; 0 is never a host. */
typedef uint64_t vmhost_handle;

/* Return codes: 0, or one of these negative values. */
enum {
    /* Done. */
    VMHOST_OK = 0,
    /* A null pointer where one is needed (on_message, host_out, argv with argc > 0, one of argv's
       strings, bytes with length > 0), a negative argc, or a write of zero bytes. Nothing done. */
    VMHOST_ERR_ARGUMENT = -1,
    /* The options are no valid command line of the app (`vmhost` would exit 64); --help and
       --version too. No host is open; the reason went to on_log (level VMHOST_LOG_ERROR). */
    VMHOST_ERR_USAGE = -2,
    /* No host has this handle: it was never opened, or it was closed and freed already (closing
       twice, writing after close). Nothing done. */
    VMHOST_ERR_HANDLE = -3,
    /* The host's input is closed: vmhost_close was called (it is ending), or the host ended by
       itself (`exit`). The bytes were not read. */
    VMHOST_ERR_CLOSED = -4,
    /* A file the host writes cannot be opened: the --trace file or the --record file (`vmhost`
       would exit 2). No host is open; the reason went to on_log. */
    VMHOST_ERR_TRACE = -5,
    /* vmhost_write from the host thread (inside a callback) while the host holds 8 MiB of input
       queued and not handled yet: it cannot wait there for room. The bytes were not taken; write
       them again after the callback returns. */
    VMHOST_ERR_FULL = -6
};

/* Levels of on_log, from the least severe: as --log-level names them. */
enum {
    VMHOST_LOG_TRACE = 0,
    VMHOST_LOG_DEBUG = 1,
    VMHOST_LOG_INFO = 2,
    VMHOST_LOG_NOTICE = 3,
    VMHOST_LOG_WARNING = 4,
    VMHOST_LOG_ERROR = 5,
    VMHOST_LOG_CRITICAL = 6
};

/*
 * Called with each message the host writes, in order: one whole JSON text (a response, a batch of
 * responses, or a notification), UTF-8, without framing and without a terminating NUL.
 * After the last message, called once more with message NULL and length 0: the host has ended
 * (vmhost_close, or `exit`), and no callback of this host comes after this one returns.
 */
typedef void (*vmhost_message_fn)(void *context, const char *message, size_t length);

/* Called with each log line the host writes at --log-level (default warning) or above. */
typedef void (*vmhost_log_fn)(void *context, int level, const char *line, size_t length);

/* VMHOST_ABI_VERSION as the library was built. */
int vmhost_abi_version(void);

/*
 * Opens a host of the library's app with the options of its command line, without the program's
 * name: e.g. {"--clock", "manual", "--test-controls"}, as `vmhost --clock manual --test-controls`
 * would run. argc may be 0 (argv may then be NULL). on_message is required; on_log may be NULL
 * (no logs). On VMHOST_OK, *host_out is the new host's handle; otherwise it is left as it was.
 * Returns VMHOST_OK, VMHOST_ERR_ARGUMENT, VMHOST_ERR_USAGE or VMHOST_ERR_TRACE.
 */
int vmhost_open(int argc, const char *const *argv, vmhost_message_fn on_message, vmhost_log_fn on_log,
                void *context, vmhost_handle *host_out);

/*
 * Writes `length` bytes to the host's input, as a client writes to `vmhost`'s stdin: whole
 * messages in either framing (ndjson: one JSON text and "\n"; lsp: "Content-Length: N\r\n\r\n"
 * then N bytes; --framing auto decides from the first bytes), or any piece of such a stream, split
 * anywhere. Each write's bytes stay together; writes to one host from one thread are read in order.
 * Past the host's bound on queued input (THREADS) it waits for room, or returns VMHOST_ERR_FULL
 * from inside a callback.
 * Returns VMHOST_OK (the bytes were taken), VMHOST_ERR_ARGUMENT, VMHOST_ERR_HANDLE,
 * VMHOST_ERR_CLOSED or VMHOST_ERR_FULL.
 */
int vmhost_write(vmhost_handle host, const void *bytes, size_t length);

/*
 * Ends the host's input, as EOF on stdin (protocol/SPEC.md §7): every message written before is
 * handled, the host waits until its requests are answered and its commands have ended (each by the
 * app's own deadline; with --clock manual it waits for nothing), delivers the output, calls
 * on_message(context, NULL, 0), and frees everything. Then *status (if status is not NULL) is what
 * `vmhost` would exit with: 0, or 1 after `exit` without `shutdown`. The handle is no longer valid.
 * Blocks the calling thread until then. A host that already ended by itself (`exit`) is freed at
 * once with its status.
 * Called from inside a callback (on the host thread, where it cannot wait), it ends the input and
 * returns at once: *status is set to -1, the host ends after the callback returns, and the handle is
 * freed after the last on_message call.
 * Returns VMHOST_OK, VMHOST_ERR_HANDLE (unknown handle: closed already) or VMHOST_ERR_CLOSED (a
 * close of this host is under way on another thread).
 */
int vmhost_close(vmhost_handle host, int *status);

/* A static, NUL-terminated English sentence for a return code ("unknown return code" for others). */
const char *vmhost_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif /* VMHOST_H */
