// vmhost-fuzz: a libFuzzer target over the wire: the frame reader (both framings, any read sizes)
// and the JSON-RPC engine behind it, then a whole host through the C ABI (include/vmhost.h).
// Every input goes through ``WireFuzzing/check(_:)``, whose preconditions are the invariants; a
// crash is a failed invariant or a memory error. How it is built and run (fuzzing, or replaying
// files): ``FuzzDriver``.
import FuzzSupport

FuzzDriver.main(name: "vmhost-fuzz", check: WireFuzzing.check)
