/*
 * vmhost_runtime.h: what the library does to the process on the Swift side's behalf. Not part of
 * the ABI (vmhost.h); hidden in the library.
 */
#ifndef VMHOST_RUNTIME_H
#define VMHOST_RUNTIME_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Gives back to the process the crash signals whose handler the Swift runtime installed when the
 * library was loaded (its backtracer: SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV),
 * setting them to their default action; a handler of anyone else (the app's) is left as it is.
 * Nothing when SWIFT_BACKTRACE is set: the app asked for the runtime's backtracer. Returns how many
 * signals were given back.
 */
__attribute__((visibility("hidden"))) int vmhost_release_runtime_crash_handlers(void);

#ifdef __cplusplus
}
#endif

#endif /* VMHOST_RUNTIME_H */
