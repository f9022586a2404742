// vmhost-fuzz: a libFuzzer target over the wire: the frame reader (both framings, any read sizes)
// and the JSON-RPC engine behind it. Every input goes through ``WireFuzzing/check(_:)``, whose
// preconditions are the invariants; a crash is a failed invariant or a memory error.
//
// Two builds of the same source:
//
// - With `FUZZING` (scripts/test.sh, suite `libfuzzer`):
//       swift build --product vmhost-fuzz --scratch-path .build-fuzz \
//           -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING
//       .build-fuzz/debug/vmhost-fuzz -seed=1 -runs=N WORK_DIR Tests/Hardening/corpus
//   takes libFuzzer's flags and corpus directories (new inputs go to the first one).
// - Without it (a plain `swift build`): a replayer that runs the same checks once over each file
//   named, or each file in each directory named, e.g. `vmhost-fuzz Tests/Hardening/corpus`, or a
//   crash file libFuzzer wrote.
//
// Everything runs on the host thread (``EventLoop``), where the engine's actor isolation holds.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VMHostEventLoop

/// libFuzzer's entry point for one input (also passed to the driver below).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    // libFuzzer calls this on the host thread (see below), which owns the bytes until it returns.
    nonisolated(unsafe) let input = UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)
    HostActor.assumeIsolated { WireFuzzing.check(input) }
    return 0
}

#if FUZZING
import CLibFuzzer

EventLoop.shared.execute {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
}
#else
EventLoop.shared.execute {
    let arguments = Array(CommandLine.arguments.dropFirst())
    exit(HostActor.assumeIsolated { Replayer.run(arguments: arguments) })
}
#endif
while true { pause() }
