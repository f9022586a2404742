/*
 * Round trips and CPU per message from C, through the C ABI of include/vmhost.h and through a pipe,
 * for bench/run.py (scenario k). One JSON line per figure on stdout.
 *
 *   embedded_bench abi  N M [vmhost options ...]   the reference app in this process (libvmhost-embedded)
 *   embedded_bench pipe N M COMMAND [ARGS ...]     a server spawned with stdin and stdout as pipes
 *
 * Figures:
 *   ping_round_trip, login_round_trip: N sequential exchanges of a `ping`, and of a `vm.send` of
 *     Login's `username` (valid and invalid in turn: one `vm.changed` each, read before its reply),
 *     from the write of the request to the reply read (pipe) or delivered to the callback (ABI);
 *     p50, p99, p99.9 in µs. For the ABI also the share of replies delivered before vmhost_write
 *     returned (the host thread was idle: the calling thread ran the host).
 *   ping_cpu, login_cpu (ABI): M requests written one per vmhost_write, without waiting for each
 *     reply: the CPU time of the whole process (the caller and the host, every thread) / M.
 *   ping_cpu_chunked (ABI): the same pings written 64 KiB at a time, as a pipe's reader reads them.
 *   (The pipe's CPU per message, the server process's, is measured by bench/run.py itself.)
 * Requests are formatted before the clock starts.
 */
#include "vmhost.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double percentile(double *sorted, int n, double p) {
    int k = (int)(p / 100.0 * n + 0.5) - 1;
    if (k < 0) k = 0;
    if (k >= n) k = n - 1;
    return sorted[k];
}

/* `count` requests, each a line, formatted once; lines[i] points into one buffer. */
struct lines {
    char *bytes;
    size_t *offsets; /* count + 1 */
    int count;
};

static struct lines make_lines(int count, long first_id, int login) {
    struct lines lines = {malloc((size_t)count * 160 + 1), malloc(sizeof(size_t) * ((size_t)count + 1)), count};
    size_t used = 0;
    for (int i = 0; i < count; i++) {
        long id = first_id + i;
        lines.offsets[i] = used;
        if (login) {
            used += (size_t)sprintf(lines.bytes + used,
                                    "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"vm.send\",\"params\":{\"vm\":\"login\","
                                    "\"input\":\"username\",\"value\":\"%s\"}}\n",
                                    id, id % 2 == 0 ? "13800138000" : "12800138000");
        } else {
            used += (size_t)sprintf(lines.bytes + used, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"ping\"}\n", id);
        }
    }
    lines.offsets[count] = used;
    return lines;
}

static void free_lines(struct lines *lines) {
    free(lines->bytes);
    free(lines->offsets);
}

static const char *login_setup =
    "{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"vm.create\",\"params\":{\"kind\":\"Login\",\"id\":\"login\"}}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"vm.subscribe\",\"params\":{\"vm\":\"login\"}}\n";

static void print_round_trips(const char *metric, double *times, int n, double before_return) {
    qsort(times, (size_t)n, sizeof(double), compare);
    printf("{\"metric\":\"%s\",\"n\":%d,\"p50_us\":%.2f,\"p99_us\":%.2f,\"p999_us\":%.2f", metric, n,
           percentile(times, n, 50), percentile(times, n, 99), percentile(times, n, 99.9));
    if (before_return >= 0) printf(",\"answered_before_return\":%.3f", before_return);
    printf("}\n");
    fflush(stdout);
}

/* ------------------------------------------------------------------------------------------------
 * Through the ABI */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static long responses = 0; /* messages starting {"jsonrpc":"2.0","id" */
static long notifications = 0;
static int ended = 0;

static void on_message(void *context, const char *message, size_t length) {
    (void)context;
    pthread_mutex_lock(&lock);
    if (message == NULL) {
        ended = 1;
    } else if (length > 22 && memcmp(message, "{\"jsonrpc\":\"2.0\",\"id\"", 21) == 0) {
        __atomic_add_fetch(&responses, 1, __ATOMIC_RELEASE);
    } else {
        notifications++;
    }
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

/* Waits until `count` responses were delivered; 1 if they were before the call. */
static int wait_responses(long count) {
    if (__atomic_load_n(&responses, __ATOMIC_ACQUIRE) >= count) return 1;
    pthread_mutex_lock(&lock);
    while (responses < count) pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    return 0;
}

static void abi_write(vmhost_handle host, const char *bytes, size_t length) {
    int code = vmhost_write(host, bytes, length);
    if (code != VMHOST_OK) {
        fprintf(stderr, "vmhost_write: %s\n", vmhost_strerror(code));
        exit(1);
    }
}

static void abi_round_trips(vmhost_handle host, const char *metric, struct lines *lines) {
    double *times = malloc(sizeof(double) * (size_t)lines->count);
    int before_return = 0;
    for (int i = 0; i < lines->count; i++) {
        long expected = __atomic_load_n(&responses, __ATOMIC_ACQUIRE) + 1;
        const char *line = lines->bytes + lines->offsets[i];
        size_t length = lines->offsets[i + 1] - lines->offsets[i];
        double t0 = now_us(CLOCK_MONOTONIC);
        abi_write(host, line, length);
        before_return += wait_responses(expected);
        times[i] = now_us(CLOCK_MONOTONIC) - t0;
    }
    if (metric) print_round_trips(metric, times, lines->count, (double)before_return / lines->count);
    free(times);
}

static void abi_cpu(vmhost_handle host, const char *metric, struct lines *lines, size_t chunk) {
    long expected = __atomic_load_n(&responses, __ATOMIC_ACQUIRE) + lines->count;
    double c0 = now_us(CLOCK_PROCESS_CPUTIME_ID), t0 = now_us(CLOCK_MONOTONIC);
    if (chunk == 0) {
        for (int i = 0; i < lines->count; i++) {
            abi_write(host, lines->bytes + lines->offsets[i], lines->offsets[i + 1] - lines->offsets[i]);
        }
    } else {
        size_t total = lines->offsets[lines->count];
        for (size_t offset = 0; offset < total; offset += chunk) {
            abi_write(host, lines->bytes + offset, total - offset < chunk ? total - offset : chunk);
        }
    }
    wait_responses(expected);
    double c1 = now_us(CLOCK_PROCESS_CPUTIME_ID), t1 = now_us(CLOCK_MONOTONIC);
    printf("{\"metric\":\"%s\",\"n\":%d,\"cpu_us_per_msg\":%.3f,\"msgs_per_s\":%.0f}\n", metric, lines->count,
           (c1 - c0) / lines->count, lines->count / ((t1 - t0) / 1e6));
    fflush(stdout);
}

static int run_abi(int n, int m, int argc, char **argv) {
    vmhost_handle host = 0;
    int code = vmhost_open(argc, (const char *const *)argv, on_message, NULL, NULL, &host);
    if (code != VMHOST_OK) {
        fprintf(stderr, "vmhost_open: %s\n", vmhost_strerror(code));
        return 1;
    }
    struct lines warm = make_lines(1000, 1, 0), pings = make_lines(n, 1, 0), many = make_lines(m, 1, 0);
    abi_round_trips(host, NULL, &warm);
    abi_round_trips(host, "ping_round_trip", &pings);
    abi_cpu(host, "ping_cpu", &many, 0);
    abi_cpu(host, "ping_cpu_chunked", &many, 65536);

    long expected = __atomic_load_n(&responses, __ATOMIC_ACQUIRE) + 2;
    abi_write(host, login_setup, strlen(login_setup));
    wait_responses(expected);
    struct lines inputs = make_lines(n, 1, 1), more = make_lines(m, 1, 1);
    long before = notifications;
    abi_round_trips(host, "login_round_trip", &inputs);
    double per_input = (double)(notifications - before) / n;
    abi_cpu(host, "login_cpu", &more, 0);
    printf("{\"metric\":\"login_changes_per_input\",\"value\":%.3f}\n", per_input);

    int status = -1;
    vmhost_close(host, &status);
    printf("{\"metric\":\"closed\",\"status\":%d,\"ended\":%d}\n", status, ended);
    free_lines(&warm), free_lines(&pings), free_lines(&many), free_lines(&inputs), free_lines(&more);
    return status == 0 ? 0 : 1;
}

/* ------------------------------------------------------------------------------------------------
 * Through a pipe */

static int child_in = -1, child_out = -1;
static char buffer[1 << 20];
static size_t buffered = 0, consumed = 0;

static void pipe_write(const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t written = write(child_in, bytes, length);
        if (written <= 0) {
            perror("write");
            exit(1);
        }
        bytes += written;
        length -= (size_t)written;
    }
}

/* Reads lines until a response (a line starting {"jsonrpc":"2.0","id"); returns the notifications read. */
static long read_response(void) {
    long seen = 0;
    while (1) {
        char *start = buffer + consumed;
        char *newline = memchr(start, '\n', buffered - consumed);
        if (newline) {
            consumed = (size_t)(newline - buffer) + 1;
            if (newline - start > 22 && memcmp(start, "{\"jsonrpc\":\"2.0\",\"id\"", 21) == 0) return seen;
            seen++;
            continue;
        }
        if (consumed == buffered) consumed = buffered = 0;
        if (buffered == sizeof buffer) {
            memmove(buffer, buffer + consumed, buffered - consumed);
            buffered -= consumed;
            consumed = 0;
        }
        ssize_t got = read(child_out, buffer + buffered, sizeof buffer - buffered);
        if (got <= 0) {
            fprintf(stderr, "the server closed its output\n");
            exit(1);
        }
        buffered += (size_t)got;
    }
}

static long pipe_round_trips(const char *metric, struct lines *lines) {
    double *times = malloc(sizeof(double) * (size_t)lines->count);
    long notes = 0;
    for (int i = 0; i < lines->count; i++) {
        double t0 = now_us(CLOCK_MONOTONIC);
        pipe_write(lines->bytes + lines->offsets[i], lines->offsets[i + 1] - lines->offsets[i]);
        notes += read_response();
        times[i] = now_us(CLOCK_MONOTONIC) - t0;
    }
    if (metric) print_round_trips(metric, times, lines->count, -1);
    free(times);
    return notes;
}

static int run_pipe(int n, char **command) {
    int to_child[2], from_child[2];
    if (pipe(to_child) || pipe(from_child)) return 1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        close(to_child[1]);
        close(from_child[0]);
        execvp(command[0], command);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    child_in = to_child[1];
    child_out = from_child[0];
    signal(SIGPIPE, SIG_IGN);
    struct lines warm = make_lines(1000, 1, 0), pings = make_lines(n, 1, 0), inputs = make_lines(n, 1, 1);
    pipe_round_trips(NULL, &warm);
    pipe_round_trips("ping_round_trip", &pings);
    pipe_write(login_setup, strlen(login_setup));
    read_response();
    read_response();
    long notes = pipe_round_trips("login_round_trip", &inputs);
    printf("{\"metric\":\"login_changes_per_input\",\"value\":%.3f}\n", (double)notes / n);
    close(child_in);
    int status = 0;
    waitpid(pid, &status, 0);
    free_lines(&warm), free_lines(&pings), free_lines(&inputs);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4 || (strcmp(argv[1], "abi") != 0 && strcmp(argv[1], "pipe") != 0)) {
        fprintf(stderr, "usage: embedded_bench abi N M [vmhost options ...]\n"
                        "       embedded_bench pipe N M COMMAND [ARGS ...]\n");
        return 64;
    }
    int n = atoi(argv[2]), m = atoi(argv[3]);
    if (strcmp(argv[1], "abi") == 0) return run_abi(n, m, argc - 4, argv + 4);
    if (argc < 5) return 64;
    return run_pipe(n, argv + 4);
}
