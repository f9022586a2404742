/* The floor for bench/run.py: a minimal JSON-RPC 2.0 server over ndjson on stdio.
 * For every line: parse it with jansson, build {"jsonrpc":"2.0","id":<id>,"result":{}},
 * dump it compactly, write it with a newline. Output is flushed whenever no further
 * input is already buffered, so pipelined input is answered in batches and a sequential
 * client is answered at once (no polling, no sleeps).
 *
 * Build: cc -O2 -o echo_server bench/echo_server.c -ljansson
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char inbuf[1 << 16];
static size_t inlen = 0, inpos = 0;
static char outbuf[1 << 16];
static size_t outlen = 0;

static void flush_out(void) {
    size_t off = 0;
    while (off < outlen) {
        ssize_t n = write(1, outbuf + off, outlen - off);
        if (n <= 0) exit(0);
        off += (size_t)n;
    }
    outlen = 0;
}

static void emit(const char *s, size_t n) {
    if (outlen + n + 1 > sizeof outbuf) flush_out();
    if (n + 1 > sizeof outbuf) { /* too large for the buffer: write directly */
        flush_out();
        for (size_t off = 0; off < n;) {
            ssize_t w = write(1, s + off, n - off);
            if (w <= 0) exit(0);
            off += (size_t)w;
        }
        if (write(1, "\n", 1) != 1) exit(0);
        return;
    }
    memcpy(outbuf + outlen, s, n);
    outlen += n;
    outbuf[outlen++] = '\n';
}

static void handle(const char *line, size_t n) {
    json_error_t err;
    json_t *req = json_loadb(line, n, 0, &err);
    json_t *resp = json_object();
    json_object_set_new(resp, "jsonrpc", json_string("2.0"));
    json_t *id = req && json_is_object(req) ? json_object_get(req, "id") : NULL;
    if (req && json_is_object(req) && id == NULL) { /* notification: no reply */
        json_decref(resp);
        json_decref(req);
        return;
    }
    json_object_set(resp, "id", id ? id : json_null());
    if (req) json_object_set_new(resp, "result", json_object());
    else {
        json_t *e = json_object();
        json_object_set_new(e, "code", json_integer(-32700));
        json_object_set_new(e, "message", json_string("Parse error"));
        json_object_set_new(resp, "error", e);
    }
    char *out = json_dumps(resp, JSON_COMPACT | JSON_PRESERVE_ORDER);
    emit(out, strlen(out));
    free(out);
    json_decref(resp);
    if (req) json_decref(req);
}

int main(void) {
    /* a growable line buffer for lines that span reads */
    char *line = NULL;
    size_t linelen = 0, linecap = 0;
    for (;;) {
        if (inpos == inlen) {
            if (outlen) flush_out();
            ssize_t n = read(0, inbuf, sizeof inbuf);
            if (n <= 0) break;
            inlen = (size_t)n;
            inpos = 0;
        }
        char *nl = memchr(inbuf + inpos, '\n', inlen - inpos);
        size_t take = nl ? (size_t)(nl - (inbuf + inpos)) : inlen - inpos;
        if (linelen == 0 && nl) {
            size_t m = take;
            if (m && inbuf[inpos + m - 1] == '\r') m--;
            if (m) handle(inbuf + inpos, m);
        } else {
            if (linelen + take > linecap) {
                linecap = (linelen + take) * 2 + 64;
                line = realloc(line, linecap);
            }
            memcpy(line + linelen, inbuf + inpos, take);
            linelen += take;
            if (nl) {
                size_t m = linelen;
                if (m && line[m - 1] == '\r') m--;
                if (m) handle(line, m);
                linelen = 0;
            }
        }
        inpos += take + (nl ? 1 : 0);
    }
    if (linelen) handle(line, linelen);
    flush_out();
    return 0;
}
