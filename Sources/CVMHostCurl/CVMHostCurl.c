#include "CVMHostCurl.h"

typedef int (*vmhost_curl_variadic)(void *, int, ...);

int vmhost_curl_easy_setopt_long(void *setopt, void *easy, int option, long value) {
    return ((vmhost_curl_variadic)setopt)(easy, option, value);
}

int vmhost_curl_easy_setopt_offset(void *setopt, void *easy, int option, long long value) {
    return ((vmhost_curl_variadic)setopt)(easy, option, value);
}

int vmhost_curl_easy_setopt_pointer(void *setopt, void *easy, int option, const void *value) {
    return ((vmhost_curl_variadic)setopt)(easy, option, value);
}

int vmhost_curl_easy_setopt_write_callback(void *setopt, void *easy, int option, vmhost_curl_write_callback value) {
    return ((vmhost_curl_variadic)setopt)(easy, option, value);
}

int vmhost_curl_easy_getinfo_long(void *getinfo, void *easy, int info, long *value) {
    return ((vmhost_curl_variadic)getinfo)(easy, info, value);
}
