// The functions of libm that round to an integral value (ceil, floor, trunc, rint, nearbyint, for
// double and float), in a file of their own: its code is placed with a start-up's
// (scripts/startup-order.txt), the rest of the target's is not.
//
// The standard library calls `ceil` in every allocation of a dictionary's or a set's storage (its
// bucket count), so a start-up would load libm for it. On x86-64 with SSE4.1 (every processor
// since 2008) each is the one instruction libm's own runs there (its IFUNC picks it): ROUNDSD or
// ROUNDSS with the same rounding mode and exception bits, without loading libm; elsewhere they
// are libm's, loaded by the first call as the others.
#include <stddef.h>
#if defined(__linux__)
#include <features.h>
#endif
#if defined(__linux__) && defined(__GLIBC__)
#include <math.h>

#include "Forward.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <smmintrin.h>

// Whether the processor has SSE4.1: 0 not known yet, 1 yes, 2 no.
static int sse41State;

static int hasSSE41(void) {
    int state = __atomic_load_n(&sse41State, __ATOMIC_RELAXED);
    if (!state) {
        unsigned int eax, ebx, ecx, edx;
        state = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSE4_1) ? 1 : 2;
        __atomic_store_n(&sse41State, state, __ATOMIC_RELAXED);
    }
    return state == 1;
}

// `name` and `name`f with the rounding `mode` of ROUNDSD/ROUNDSS (as in glibc's sysdeps/x86_64/
// fpu/multiarch: ceil 10, floor 9, trunc 11, rint 4, nearbyint 12).
#define ROUNDING(name, mode)                                                   \
    __attribute__((target("sse4.1"))) static double name##SSE41(double x) {   \
        __m128d value = _mm_set_sd(x);                                         \
        return _mm_cvtsd_f64(_mm_round_sd(value, value, mode));                \
    }                                                                          \
    __attribute__((target("sse4.1"))) static float name##fSSE41(float x) {    \
        __m128 value = _mm_set_ss(x);                                          \
        return _mm_cvtss_f32(_mm_round_ss(value, value, mode));                \
    }                                                                          \
    static FORWARD(name##Libm, double, (double x), (x), #name)                 \
    static FORWARD(name##fLibm, float, (float x), (x), #name "f")              \
    double name(double x) { return hasSSE41() ? name##SSE41(x) : name##Libm(x); } \
    float name##f(float x) { return hasSSE41() ? name##fSSE41(x) : name##fLibm(x); }

ROUNDING(ceil, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)
ROUNDING(floor, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
ROUNDING(trunc, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
ROUNDING(rint, _MM_FROUND_CUR_DIRECTION | _MM_FROUND_RAISE_EXC)
ROUNDING(nearbyint, _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC)
#else
UNARY(ceil, double) UNARY(floor, double) UNARY(trunc, double) UNARY(rint, double) UNARY(nearbyint, double)
UNARY(ceilf, float) UNARY(floorf, float) UNARY(truncf, float) UNARY(rintf, float) UNARY(nearbyintf, float)
#endif
#endif
