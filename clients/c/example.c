/*
 * The reference app in this process, from C: open a host through include/vmhost.h, log in, list
 * the products, close. The replies are parsed with jansson (any JSON library does); the host needs
 * nothing of the caller but bytes in and a callback out.
 *
 *   swift build --product vmhost-embedded
 *   cc -o example clients/c/example.c -ISources/CVMHost/include -L.build/debug -lvmhost-embedded \
 *      -Wl,-rpath,$PWD/.build/debug -ljansson -lpthread
 *   ./example
 *
 * Prints the login's outcome, the first page of products (id, name, rate), then the host's exit
 * status; exits 0 when all went as the embedded backend's demo data says (protocol/backend.md).
 */
#include "vmhost.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What the host wrote, filled by on_message on whichever thread runs the host. */
struct inbox {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    json_t *messages; /* every message, in order */
    size_t read;      /* how many were looked at */
    int ended;        /* the last call (NULL, 0) came */
};

static void on_message(void *context, const char *message, size_t length) {
    struct inbox *inbox = context;
    pthread_mutex_lock(&inbox->lock);
    if (message == NULL) {
        inbox->ended = 1;
    } else {
        /* The bytes are valid during this call only: jansson copies what it parses. */
        json_t *parsed = json_loadb(message, length, 0, NULL);
        if (parsed) json_array_append_new(inbox->messages, parsed);
    }
    pthread_cond_broadcast(&inbox->changed);
    pthread_mutex_unlock(&inbox->lock);
}

static void on_log(void *context, int level, const char *line, size_t length) {
    (void)context;
    fprintf(stderr, "[vmhost %d] %.*s\n", level, (int)length, line);
}

/* Sends a request as one ndjson line and waits (at most 10 s) for its response; the notifications
   written before it stay in the inbox. Returns a new reference, or NULL on a time-out. */
static json_t *request(vmhost_handle host, struct inbox *inbox, int id, const char *method, json_t *params) {
    json_t *message = json_pack("{s:s, s:i, s:s}", "jsonrpc", "2.0", "id", id, "method", method);
    if (params) json_object_set_new(message, "params", params);
    char *text = json_dumps(message, JSON_COMPACT);
    json_decref(message);
    size_t length = strlen(text);
    char *line = malloc(length + 1);
    memcpy(line, text, length);
    line[length] = '\n';
    free(text);
    int code = vmhost_write(host, line, length + 1);
    free(line); /* vmhost read the bytes during the call */
    if (code != VMHOST_OK) {
        fprintf(stderr, "vmhost_write: %s\n", vmhost_strerror(code));
        return NULL;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    json_t *response = NULL;
    pthread_mutex_lock(&inbox->lock);
    while (!response) {
        while (inbox->read < json_array_size(inbox->messages)) {
            json_t *next = json_array_get(inbox->messages, inbox->read++);
            json_t *next_id = json_object_get(next, "id");
            if (!json_object_get(next, "method") && json_is_integer(next_id) && json_integer_value(next_id) == id) {
                response = json_incref(next);
                break;
            }
        }
        if (response || inbox->ended) break;
        if (pthread_cond_timedwait(&inbox->changed, &inbox->lock, &deadline) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&inbox->lock);
    if (!response) fprintf(stderr, "no response to %s (id %d)\n", method, id);
    return response;
}

/* The response's result, or NULL after printing its error. */
static json_t *result_of(json_t *response, const char *what) {
    json_t *result = response ? json_object_get(response, "result") : NULL;
    if (!result && response) {
        char *error = json_dumps(json_object_get(response, "error"), JSON_COMPACT);
        fprintf(stderr, "%s failed: %s\n", what, error);
        free(error);
    }
    return result;
}

int main(void) {
    struct inbox inbox = {.messages = json_array()};
    pthread_mutex_init(&inbox.lock, NULL);
    pthread_cond_init(&inbox.changed, NULL);

    /* The options of the command line: the embedded backend, the system clock. */
    const char *argv[] = {"--backend", "embedded"};
    vmhost_handle host = 0;
    int code = vmhost_open(2, argv, on_message, on_log, &inbox, &host);
    if (code != VMHOST_OK) {
        fprintf(stderr, "vmhost_open: %s\n", vmhost_strerror(code));
        return 1;
    }

    int ok = 1;
    json_t *response = request(host, &inbox, 1, "initialize", json_pack("{s:s}", "locale", "en"));
    json_t *result = result_of(response, "initialize");
    ok = ok && result;
    if (result) printf("serving: %s\n", json_string_value(json_object_get(json_object_get(result, "serverInfo"), "name")));
    json_decref(response);

    /* Log in with the demo account. */
    const char *steps[][3] = {
        {"vm.create", "Login", NULL},
        {"vm.send", "username", "13800138000"},
        {"vm.send", "password", "123456"},
        {"vm.send", "submit", NULL},
    };
    int id = 2;
    for (size_t i = 0; ok && i < sizeof steps / sizeof steps[0]; i++, id++) {
        json_t *params = strcmp(steps[i][0], "vm.create") == 0
            ? json_pack("{s:s, s:s}", "kind", steps[i][1], "id", "login")
            : json_pack("{s:s, s:s}", "vm", "login", "input", steps[i][1]);
        if (steps[i][2]) json_object_set_new(params, "value", json_string(steps[i][2]));
        response = request(host, &inbox, id, steps[i][0], params);
        ok = result_of(response, steps[i][1]) != NULL;
        json_decref(response);
    }
    if (ok) printf("logged in as 13800138000\n");

    /* The first page of products. */
    if (ok) {
        response = request(host, &inbox, id++, "vm.create", json_pack("{s:s, s:s}", "kind", "ProductList", "id", "products"));
        ok = result_of(response, "vm.create ProductList") != NULL;
        json_decref(response);
    }
    if (ok) {
        response = request(host, &inbox, id++, "vm.send", json_pack("{s:s, s:s}", "vm", "products", "input", "refresh"));
        ok = result_of(response, "refresh") != NULL;
        json_decref(response);
    }
    if (ok) {
        response = request(host, &inbox, id++, "vm.get", json_pack("{s:s, s:[s]}", "vm", "products", "outputs", "items"));
        json_t *items = json_object_get(json_object_get(result_of(response, "vm.get"), "values"), "items");
        size_t index;
        json_t *cell;
        json_array_foreach(items, index, cell) {
            printf("%s\t%s\t%s\n", json_string_value(json_object_get(cell, "id")),
                   json_string_value(json_object_get(cell, "name")), json_string_value(json_object_get(cell, "profit")));
        }
        printf("products: %zu\n", json_array_size(items));
        ok = json_array_size(items) > 0;
        json_decref(response);
    }

    /* The end of input, as EOF on stdin: the host answers what it read, then ends. */
    int status = -1;
    code = vmhost_close(host, &status);
    printf("closed: %s, status %d\n", vmhost_strerror(code), status);
    json_decref(inbox.messages);
    pthread_cond_destroy(&inbox.changed);
    pthread_mutex_destroy(&inbox.lock);
    return ok && code == VMHOST_OK && status == 0 && inbox.ended ? 0 : 1;
}
