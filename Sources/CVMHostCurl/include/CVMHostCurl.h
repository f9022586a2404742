// Typed calls of libcurl's variadic functions, for the HTTP client (VMHostHTTP), which loads libcurl with
// dlopen on its first call (Sources/VMHostHTTP/Engine/CurlLibrary.swift).
//
// Swift cannot call a C variadic function through a pointer, and `curl_easy_setopt` and
// `curl_easy_getinfo` are variadic: each function here takes the pointer dlsym returned and calls
// it with one argument of a fixed type. The few types of libcurl's ABI used are declared here, so
// that building needs no libcurl headers; their layout is libcurl's stable ABI (libcurl.so.4).
#ifndef VMHOST_CVMHOSTCURL_H
#define VMHOST_CVMHOSTCURL_H

#include <stddef.h>

/// `struct CURLMsg` of curl/multi.h: what `curl_multi_info_read` returns.
typedef struct vmhost_curl_message {
    /// `CURLMSG_DONE` (1) when the transfer of `easy_handle` has completed.
    int msg;
    void *easy_handle;
    union {
        void *whatever;
        /// The transfer's `CURLcode` when `msg` is `CURLMSG_DONE`.
        int result;
    } data;
} vmhost_curl_message;

/// `curl_write_callback`: receives body bytes; returning another count than `size * count` aborts
/// the transfer with `CURLE_WRITE_ERROR`.
typedef size_t (*vmhost_curl_write_callback)(char *bytes, size_t size, size_t count, void *context);

/// `curl_easy_setopt(easy, option, value)` for an option of type `long`.
int vmhost_curl_easy_setopt_long(void *setopt, void *easy, int option, long value);
/// `curl_easy_setopt(easy, option, value)` for an option of type `curl_off_t`.
int vmhost_curl_easy_setopt_offset(void *setopt, void *easy, int option, long long value);
/// `curl_easy_setopt(easy, option, value)` for an option taking a pointer (a string, a list, data).
int vmhost_curl_easy_setopt_pointer(void *setopt, void *easy, int option, const void *value);
/// `curl_easy_setopt(easy, option, value)` for `CURLOPT_WRITEFUNCTION`.
int vmhost_curl_easy_setopt_write_callback(void *setopt, void *easy, int option, vmhost_curl_write_callback value);
/// `curl_easy_getinfo(easy, info, &value)` for information of type `long`.
int vmhost_curl_easy_getinfo_long(void *getinfo, void *easy, int info, long *value);

#endif
