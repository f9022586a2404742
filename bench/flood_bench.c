/*
 * Hosts in one process under a flood (bench/RESULTS.md, "Hosts in one process"): a thread writes
 * pings to host B as fast as vmhost_write takes them, never waiting for replies, while the main
 * thread writes one ping at a time to host A and waits for its reply. One JSON line per figure:
 *
 *   write_call: how long each vmhost_write of one ping to A took to return (µs: p50, p99, max);
 *   round_trip: from that write to A's reply in its callback (µs: p50, p99, max);
 *   flooded: pings B's writer got taken, and B's replies, over the run; max_rss_kib: the process's
 *     peak resident memory (B's queued input is bounded: 8 MiB).
 *
 *   flood_bench N [B_WRITES]   N pings to A (default 2000), B_WRITES pings to B at most (default 2,000,000)
 */
#include "vmhost.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static atomic_long a_replies, b_replies, b_written;
static atomic_int stop;

static void on_a(void *context, const char *message, size_t length) {
    (void)context; (void)length;
    if (message) atomic_fetch_add(&a_replies, 1);
}

static void on_b(void *context, const char *message, size_t length) {
    (void)context; (void)length;
    if (message) atomic_fetch_add(&b_replies, 1);
}

struct flood { vmhost_handle host; long limit; };

static void *flooder(void *argument) {
    struct flood *flood = argument;
    char line[96];
    for (long id = 1; id <= flood->limit && !atomic_load(&stop); id++) {
        int n = snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"ping\"}\n", id);
        if (vmhost_write(flood->host, line, (size_t)n) != VMHOST_OK) break;
        atomic_fetch_add(&b_written, 1);
    }
    return NULL;
}

static void report(const char *name, double *values, int n) {
    qsort(values, (size_t)n, sizeof *values, compare);
    printf("{\"figure\":\"%s\",\"n\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f}\n", name, n, values[n / 2],
           values[(int)(n * 0.99)], values[n - 1]);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    long limit = argc > 2 ? atol(argv[2]) : 2000000;
    vmhost_handle a, b;
    if (vmhost_open(0, NULL, on_a, NULL, NULL, &a) != VMHOST_OK || vmhost_open(0, NULL, on_b, NULL, NULL, &b) != VMHOST_OK) {
        fprintf(stderr, "flood_bench: cannot open the hosts\n");
        return 1;
    }
    struct flood flood = {b, limit};
    pthread_t thread;
    pthread_create(&thread, NULL, flooder, &flood);
    while (atomic_load(&b_written) < 10000 && atomic_load(&b_written) < limit) {}
    double *calls = malloc(sizeof(double) * (size_t)n), *trips = malloc(sizeof(double) * (size_t)n);
    char line[96];
    for (int i = 0; i < n; i++) {
        long before = atomic_load(&a_replies);
        int length = snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}\n", i + 1);
        double start = now_us();
        vmhost_write(a, line, (size_t)length);
        calls[i] = now_us() - start;
        while (atomic_load(&a_replies) == before) {}
        trips[i] = now_us() - start;
    }
    atomic_store(&stop, 1);
    pthread_join(thread, NULL);
    report("write_call", calls, n);
    report("round_trip", trips, n);
    double closing = now_us();
    int status = 0;
    vmhost_close(b, &status);
    double closed = now_us() - closing;
    vmhost_close(a, &status);
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("{\"figure\":\"flooded\",\"b_written\":%ld,\"b_replies\":%ld,\"close_b_ms\":%.1f,\"max_rss_kib\":%ld}\n",
           atomic_load(&b_written), atomic_load(&b_replies), closed / 1000, usage.ru_maxrss);
    return 0;
}
