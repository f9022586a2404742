// The C math library (libm), loaded by the first call of one of its functions, not at start-up.
//
// The static Swift standard library calls 107 functions of libm (`Float80.squareRoot()`,
// `Double.rounded()`, `Float` elementary functions...), so the loader maps libm into every
// start-up, relocates it and runs its 21 IFUNC resolvers (each picks an FMA or AVX2 variant),
// which touch 0.3–0.4 MiB of its code that an idle host keeps resident, though a host serving a
// `ping` calls none of them. Each is defined here instead, in an object file of the executable
// (so the link resolves the standard library's calls to these, and with libm linked as needed,
// scripts/build-release.sh, libm is not a dependency of the executable at all): the first call
// opens libm with `dlopen`, looks the function up in it and calls it; later calls go straight
// through the pointer found. Results, errno and the floating-point environment are libm's own.
// The rounding functions, which a start-up does call, are Rounding.c's.
//
// With the shared runtime (debug builds) libm is loaded anyway, by the runtime; these still
// stand in for it in the executable and in the runtime's calls, and find the same functions.
// glibc only (`dlopen` in the C library); elsewhere libm is linked as usual. A function the
// standard library calls and this list lacks leaves libm a dependency of the executable:
// scripts/build-release.sh fails the build then, naming it.
#include <stddef.h>
#if defined(__linux__)
#include <features.h>
#endif
#if defined(__linux__) && defined(__GLIBC__)
#include <dlfcn.h>
#include <errno.h>
#include <gnu/lib-names.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "Forward.h"

static void *library;

void *libmFunction(const char *name) {
    int savedErrno = errno;
    void *handle = __atomic_load_n(&library, __ATOMIC_ACQUIRE);
    if (!handle) {
        // Two threads may both get here: `dlopen` counts the second open, and both store the
        // same handle.
        handle = dlopen(LIBM_SO, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char *error = dlerror();
            fprintf(stderr, "vmhost: cannot load %s: %s\n", LIBM_SO, error ? error : "unknown error");
            abort();
        }
        __atomic_store_n(&library, handle, __ATOMIC_RELEASE);
    }
    // Looked up in libm itself, never in the global scope, which finds the function defined here.
    void *function = dlsym(handle, name);
    if (!function) {
        fprintf(stderr, "vmhost: %s has no function %s\n", LIBM_SO, name);
        abort();
    }
    errno = savedErrno;
    return function;
}

UNARY(cos, double) UNARY(exp, double) UNARY(exp2, double) UNARY(log, double) UNARY(log10, double)
UNARY(log2, double) UNARY(round, double) UNARY(sin, double) UNARY(sqrt, double)

UNARY(acosf, float) UNARY(acoshf, float) UNARY(asinf, float) UNARY(asinhf, float) UNARY(atanf, float)
UNARY(atanhf, float) UNARY(cbrtf, float) UNARY(cosf, float) UNARY(coshf, float) UNARY(erfcf, float)
UNARY(erff, float) UNARY(exp2f, float) UNARY(expf, float) UNARY(expm1f, float) UNARY(log10f, float)
UNARY(log1pf, float) UNARY(log2f, float) UNARY(logbf, float) UNARY(logf, float) UNARY(roundf, float)
UNARY(sinf, float) UNARY(sinhf, float) UNARY(sqrtf, float) UNARY(tanf, float) UNARY(tanhf, float)
UNARY(tgammaf, float)

UNARY(acoshl, long double) UNARY(acosl, long double) UNARY(asinhl, long double) UNARY(asinl, long double)
UNARY(atanhl, long double) UNARY(atanl, long double) UNARY(cbrtl, long double) UNARY(ceill, long double)
UNARY(cosl, long double) UNARY(coshl, long double) UNARY(erfcl, long double) UNARY(erfl, long double)
UNARY(exp2l, long double) UNARY(expl, long double) UNARY(expm1l, long double) UNARY(floorl, long double)
UNARY(log10l, long double) UNARY(log1pl, long double) UNARY(log2l, long double) UNARY(logbl, long double)
UNARY(logl, long double) UNARY(nearbyintl, long double) UNARY(rintl, long double)
UNARY(roundl, long double) UNARY(sinl, long double) UNARY(sinhl, long double) UNARY(sqrtl, long double)
UNARY(tanhl, long double) UNARY(tanl, long double) UNARY(tgammal, long double) UNARY(truncl, long double)

BINARY(fmod, double) BINARY(remainder, double)
BINARY(atan2f, float) BINARY(fdimf, float) BINARY(fmodf, float) BINARY(hypotf, float)
BINARY(nextafterf, float) BINARY(powf, float) BINARY(remainderf, float)
BINARY(atan2l, long double) BINARY(fdiml, long double) BINARY(fmaxl, long double)
BINARY(fminl, long double) BINARY(fmodl, long double) BINARY(hypotl, long double)
BINARY(nextafterl, long double) BINARY(powl, long double) BINARY(remainderl, long double)

LIBM(fma, double, (double x, double y, double z), (x, y, z))
LIBM(fmaf, float, (float x, float y, float z), (x, y, z))
LIBM(fmal, long double, (long double x, long double y, long double z), (x, y, z))
LIBM(remquo, double, (double x, double y, int *quotient), (x, y, quotient))
LIBM(remquof, float, (float x, float y, int *quotient), (x, y, quotient))
LIBM(remquol, long double, (long double x, long double y, int *quotient), (x, y, quotient))
LIBM(lgamma_r, double, (double x, int *sign), (x, sign))
LIBM(lgammaf_r, float, (float x, int *sign), (x, sign))
LIBM(lgammal_r, long double, (long double x, int *sign), (x, sign))
LIBM(jn, double, (int n, double x), (n, x))
LIBM(yn, double, (int n, double x), (n, x))
LIBM(nanf, float, (const char *tag), (tag))
LIBM(nanl, long double, (const char *tag), (tag))
#endif
