#ifndef VMHOST_CJANSSON_SHIM_H
#define VMHOST_CJANSSON_SHIM_H
#include <jansson.h>

/* jansson's inline helpers and macros are not visible to Swift; these wrappers are. */
static inline json_type vmhost_json_typeof(const json_t *json) { return json_typeof(json); }
static inline void vmhost_json_decref(json_t *json) { json_decref(json); }
static inline json_t *vmhost_json_incref(json_t *json) { return json_incref(json); }
#endif
