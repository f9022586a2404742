// What the two files of the target share: the function that loads libm and looks a function up in
// it, and the macros that define a function forwarding to libm's (LibmOnFirstCall.c says why).
#ifndef LIBM_ON_FIRST_CALL_FORWARD_H
#define LIBM_ON_FIRST_CALL_FORWARD_H

// The function `name` of libm; loads libm on the first call. It fails only on a system without
// libm, which the process cannot run on: it says so and aborts. errno is left as it was.
__attribute__((visibility("hidden"))) void *libmFunction(const char *name);

// Defines `name` with the parameters `params` (a parenthesised list), forwarding `args` to libm's
// function `libmName`.
#define FORWARD(name, type, params, args, libmName)                            \
    type name params {                                                         \
        typedef type(*Function) params;                                        \
        static Function function;                                              \
        Function resolved = __atomic_load_n(&function, __ATOMIC_ACQUIRE);      \
        if (!resolved) {                                                       \
            resolved = (Function)libmFunction(libmName);                       \
            __atomic_store_n(&function, resolved, __ATOMIC_RELEASE);           \
        }                                                                      \
        return resolved args;                                                  \
    }

// libm's function `name`; one argument and result of one type (double, float, long double); two.
#define LIBM(name, type, params, args) FORWARD(name, type, params, args, #name)
#define UNARY(name, type) LIBM(name, type, (type x), (x))
#define BINARY(name, type) LIBM(name, type, (type x, type y), (x, y))

#endif
