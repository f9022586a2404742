/*
 * Open, use and close hosts of libvmhost-embedded many times, with the hostile calls of
 * include/vmhost.h's contract in between; for the sanitizers (scripts/sanitize-embedded.sh) and the
 * embedding suite (Tests/Embedding). Plain C, no JSON library: the replies are recognised by their
 * ids. Exits 0 when every cycle went as the contract says, else prints what did not and exits 1.
 *
 *   cycles [COUNT]      (default 1000)
 *
 * Each cycle opens a host (a manual clock with test controls, or the system clock), writes a login
 * and a product list in one buffer split at a place that moves from cycle to cycle, waits for the
 * replies, and ends the host one of four ways: vmhost_close (EOF), `shutdown` + `exit` then close,
 * vmhost_close from inside the callback, or a second host open at once, closed from another thread.
 * In between: a zero-length write, a null buffer, a write after close, a second close, an unknown
 * handle, a null callback, a bad option.
 */
#include "vmhost.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures = 0;
#define CHECK(cond, ...)                                                                            \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            failures++;                                                                             \
            fprintf(stderr, "cycles.c:%d: ", __LINE__);                                             \
            fprintf(stderr, __VA_ARGS__);                                                           \
            fprintf(stderr, "\n");                                                                  \
        }                                                                                           \
    } while (0)

struct inbox {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int replies;          /* responses seen (a message with "id" and no "method") */
    int last_id;          /* the highest numeric id answered */
    int ended;            /* the NULL call came */
    int calls_after_end;  /* calls after it: must stay 0 */
    int close_inside;     /* close the host from inside the callback at this id (0: never) */
    vmhost_handle handle;
    int inside_code;      /* what vmhost_close answered there */
    int inside_status;
};

static void on_message(void *context, const char *message, size_t length) {
    struct inbox *inbox = context;
    pthread_mutex_lock(&inbox->lock);
    if (inbox->ended) inbox->calls_after_end++;
    if (message == NULL) {
        CHECK(length == 0, "the last call has length %zu", length);
        inbox->ended = 1;
    } else {
        /* {"jsonrpc":"2.0","id":N,... : a response to a numeric id. */
        const char *key = "\"id\":";
        const char *found = NULL;
        if (length > 30 && memcmp(message, "{\"jsonrpc\":\"2.0\",\"id\":", 22) == 0) found = message + 22;
        (void)key;
        if (found) {
            int id = atoi(found);
            inbox->replies++;
            if (id > inbox->last_id) inbox->last_id = id;
            if (inbox->close_inside && id == inbox->close_inside) {
                int status = 7;
                /* On the host thread: ends the input and returns at once. */
                inbox->inside_code = vmhost_close(inbox->handle, &status);
                inbox->inside_status = status;
            }
        }
    }
    pthread_cond_broadcast(&inbox->changed);
    pthread_mutex_unlock(&inbox->lock);
}

static int log_lines = 0;
static void on_log(void *context, int level, const char *line, size_t length) {
    (void)context;
    (void)level;
    (void)line;
    (void)length;
    __atomic_add_fetch(&log_lines, 1, __ATOMIC_RELAXED);
}

static void inbox_init(struct inbox *inbox) {
    memset(inbox, 0, sizeof *inbox);
    pthread_mutex_init(&inbox->lock, NULL);
    pthread_cond_init(&inbox->changed, NULL);
}

static void inbox_destroy(struct inbox *inbox) {
    pthread_cond_destroy(&inbox->changed);
    pthread_mutex_destroy(&inbox->lock);
}

/* Waits (at most 10 s) until `id` was answered or the host ended; 1 if answered. */
static int wait_for(struct inbox *inbox, int id) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    pthread_mutex_lock(&inbox->lock);
    while (inbox->last_id < id && !inbox->ended) {
        if (pthread_cond_timedwait(&inbox->changed, &inbox->lock, &deadline) == ETIMEDOUT) break;
    }
    int answered = inbox->last_id >= id;
    pthread_mutex_unlock(&inbox->lock);
    return answered;
}

static int wait_for_end(struct inbox *inbox) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    pthread_mutex_lock(&inbox->lock);
    while (!inbox->ended) {
        if (pthread_cond_timedwait(&inbox->changed, &inbox->lock, &deadline) == ETIMEDOUT) break;
    }
    int ended = inbox->ended;
    pthread_mutex_unlock(&inbox->lock);
    return ended;
}

static const char *session =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"locale\":\"en\"}}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"vm.create\",\"params\":{\"kind\":\"Login\",\"id\":\"login\"}}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"vm.subscribe\",\"params\":{\"vm\":\"login\"}}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"vm.send\",\"params\":{\"vm\":\"login\",\"input\":\"username\",\"value\":\"13800138000\"}}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"vm.send\",\"params\":{\"vm\":\"login\",\"input\":\"password\",\"value\":\"123456\"}}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"vm.send\",\"params\":{\"vm\":\"login\",\"input\":\"submit\"}}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"vm.create\",\"params\":{\"kind\":\"ProductList\",\"id\":\"pl\"}}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"vm.subscribe\",\"params\":{\"vm\":\"pl\",\"diff\":true}}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"vm.send\",\"params\":{\"vm\":\"pl\",\"input\":\"refresh\"}}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"vm.send\",\"params\":{\"vm\":\"pl\",\"input\":\"loadMore\"}}\n";
#define LAST_ID 10

static const char *manual[] = {"--clock", "manual", "--test-controls"};
static const char *system_clock[] = {"--backend", "embedded"};

/* Opens a host; the arguments alternate between a manual and the system clock. */
static vmhost_handle open_host(int cycle, struct inbox *inbox) {
    vmhost_handle handle = 0;
    int manual_clock = cycle % 2 == 0;
    int code = vmhost_open(manual_clock ? 3 : 2, manual_clock ? manual : system_clock, on_message,
                           cycle % 3 == 0 ? on_log : NULL, inbox, &handle);
    CHECK(code == VMHOST_OK && handle != 0, "cycle %d: vmhost_open answered %d", cycle, code);
    inbox->handle = handle;
    return handle;
}

/* The session, written in two pieces split at a place that moves with the cycle. */
static void write_session(int cycle, vmhost_handle handle) {
    size_t length = strlen(session);
    size_t split = 1 + (size_t)(cycle * 37) % (length - 1);
    CHECK(vmhost_write(handle, session, split) == VMHOST_OK, "cycle %d: first piece refused", cycle);
    CHECK(vmhost_write(handle, session + split, length - split) == VMHOST_OK, "cycle %d: second piece refused", cycle);
}

struct closer {
    vmhost_handle handle;
    int code;
    int status;
};

static void *close_on_thread(void *argument) {
    struct closer *closer = argument;
    closer->code = vmhost_close(closer->handle, &closer->status);
    return NULL;
}

static void hostile_calls(int cycle) {
    vmhost_handle handle = 0;
    struct inbox inbox;
    inbox_init(&inbox);
    CHECK(vmhost_open(0, NULL, NULL, NULL, &inbox, &handle) == VMHOST_ERR_ARGUMENT, "a null callback was accepted");
    CHECK(vmhost_open(0, NULL, on_message, NULL, &inbox, NULL) == VMHOST_ERR_ARGUMENT, "a null handle pointer was accepted");
    CHECK(vmhost_open(-1, NULL, on_message, NULL, &inbox, &handle) == VMHOST_ERR_ARGUMENT, "argc -1 was accepted");
    CHECK(vmhost_open(2, NULL, on_message, NULL, &inbox, &handle) == VMHOST_ERR_ARGUMENT, "a null argv was accepted");
    const char *holes[] = {"--clock", NULL};
    CHECK(vmhost_open(2, holes, on_message, NULL, &inbox, &handle) == VMHOST_ERR_ARGUMENT, "a null argument was accepted");
    const char *bad[] = {"--no-such-option"};
    CHECK(vmhost_open(1, bad, on_message, on_log, &inbox, &handle) == VMHOST_ERR_USAGE, "a bad option was accepted");
    const char *trace[] = {"--trace", "/nonexistent/directory/trace"};
    CHECK(vmhost_open(2, trace, on_message, on_log, &inbox, &handle) == VMHOST_ERR_TRACE, "an impossible trace was accepted");
    CHECK(handle == 0, "a refused open wrote the handle");
    CHECK(vmhost_write(0, "x", 1) == VMHOST_ERR_HANDLE, "handle 0 was written");
    CHECK(vmhost_write(0xdeadbeef, "x", 1) == VMHOST_ERR_HANDLE, "an unknown handle was written");
    CHECK(vmhost_close(0xdeadbeef, NULL) == VMHOST_ERR_HANDLE, "an unknown handle was closed");
    CHECK(inbox.replies == 0 && !inbox.ended, "a refused open called back");
    inbox_destroy(&inbox);
    (void)cycle;
}

static void one_cycle(int cycle) {
    struct inbox inbox;
    inbox_init(&inbox);
    int way = cycle % 4;
    if (way == 2) inbox.close_inside = LAST_ID;
    vmhost_handle handle = open_host(cycle, &inbox);
    if (!handle) return;

    CHECK(vmhost_write(handle, session, 0) == VMHOST_ERR_ARGUMENT, "cycle %d: a zero-length write was accepted", cycle);
    CHECK(vmhost_write(handle, NULL, 5) == VMHOST_ERR_ARGUMENT, "cycle %d: a null buffer was accepted", cycle);
    write_session(cycle, handle);
    CHECK(wait_for(&inbox, LAST_ID), "cycle %d: no reply to %d (last %d)", cycle, LAST_ID, inbox.last_id);

    int status = -2;
    if (way == 0) {
        CHECK(vmhost_close(handle, &status) == VMHOST_OK && status == 0, "cycle %d: close answered status %d", cycle, status);
    } else if (way == 1) {
        const char *bye = "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"shutdown\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}\n";
        CHECK(vmhost_write(handle, bye, strlen(bye)) == VMHOST_OK, "cycle %d: shutdown refused", cycle);
        CHECK(wait_for_end(&inbox), "cycle %d: exit did not end the host", cycle);
        CHECK(vmhost_write(handle, session, 10) == VMHOST_ERR_CLOSED, "cycle %d: a write after exit was not refused as closed", cycle);
        CHECK(vmhost_close(handle, &status) == VMHOST_OK && status == 0, "cycle %d: close after exit: status %d", cycle, status);
    } else if (way == 2) {
        CHECK(wait_for_end(&inbox), "cycle %d: the close from inside the callback did not end the host", cycle);
        CHECK(inbox.inside_code == VMHOST_OK && inbox.inside_status == -1,
              "cycle %d: close inside the callback answered %d, status %d", cycle, inbox.inside_code, inbox.inside_status);
    } else {
        /* A second host at once, closed from another thread while this one closes here. */
        struct inbox other;
        inbox_init(&other);
        vmhost_handle second = open_host(cycle + 1, &other);
        write_session(cycle + 1, second);
        struct closer closer = {second, -9, -9};
        pthread_t thread;
        pthread_create(&thread, NULL, close_on_thread, &closer);
        CHECK(vmhost_close(handle, &status) == VMHOST_OK && status == 0, "cycle %d: close answered status %d", cycle, status);
        pthread_join(thread, NULL);
        CHECK(closer.code == VMHOST_OK && closer.status == 0, "cycle %d: the other thread's close answered %d, status %d",
              cycle, closer.code, closer.status);
        CHECK(other.ended && other.calls_after_end == 0, "cycle %d: the second host did not end cleanly", cycle);
        CHECK(other.last_id == LAST_ID, "cycle %d: the second host answered up to %d before its end", cycle, other.last_id);
        inbox_destroy(&other);
    }
    CHECK(inbox.ended, "cycle %d: no last call", cycle);
    CHECK(inbox.calls_after_end == 0, "cycle %d: %d calls after the last", cycle, inbox.calls_after_end);
    CHECK(vmhost_write(handle, session, 10) == VMHOST_ERR_HANDLE, "cycle %d: a write after close was not refused", cycle);
    CHECK(vmhost_close(handle, &status) == VMHOST_ERR_HANDLE, "cycle %d: a second close was not refused", cycle);
    inbox_destroy(&inbox);
}

int main(int argc, char **argv) {
    int count = argc > 1 ? atoi(argv[1]) : 1000;
    CHECK(vmhost_abi_version() == VMHOST_ABI_VERSION, "ABI version %d", vmhost_abi_version());
    for (int cycle = 0; cycle < count && failures < 20; cycle++) {
        if (cycle % 50 == 0) hostile_calls(cycle);
        one_cycle(cycle);
    }
    printf("%d cycles, %d failures, %d log lines\n", count, failures, log_lines);
    return failures == 0 ? 0 : 1;
}
