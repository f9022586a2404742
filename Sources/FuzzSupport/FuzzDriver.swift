// The `main` shared by the libFuzzer targets (vmhost-fuzz, vmhost-fuzz-backend). Two builds of the
// same source:
//
// - With `FUZZING` (scripts/test.sh, suite `libfuzzer`):
//       swift build -c release --product NAME --scratch-path .build-fuzz \
//           -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING
//       .build-fuzz/release/NAME -seed=1 -runs=N WORK_DIR CORPUS_DIR
//   takes libFuzzer's flags and corpus directories (new inputs go to the first one).
// - Without it (a plain `swift build`): a replayer that runs the same check once over each file
//   named, or each file in each directory named, e.g. `vmhost-fuzz Tests/Hardening/corpus`, or a
//   crash file libFuzzer wrote.
//
// Everything runs on the host thread (``EventLoop``), where the actor isolation of the code under
// test holds.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Transport) import VMHostEventLoop
#if FUZZING
import CLibFuzzer
#endif

/// The check of the running target: set once by ``FuzzDriver/main(name:check:)`` before any input.
nonisolated(unsafe) private var currentCheck: (@HostActor (UnsafeRawBufferPointer) -> Void)?

/// libFuzzer's entry point for one input (also passed to the driver below).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    // libFuzzer calls this on the host thread (see below), which owns the bytes until it returns.
    nonisolated(unsafe) let input = UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)
    HostActor.assumeIsolated { currentCheck?(input) }
    return 0
}

public enum FuzzDriver {
    /// Runs `check` over every input, from libFuzzer (`FUZZING`) or from the files named on the
    /// command line; exits with the run's status.
    public static func main(name: String, check: @escaping @HostActor (UnsafeRawBufferPointer) -> Void) -> Never {
        currentCheck = check
        EventLoop.shared.execute {
            #if FUZZING
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
            #else
            let arguments = Array(CommandLine.arguments.dropFirst())
            exit(HostActor.assumeIsolated { Replayer.run(name: name, arguments: arguments) { currentCheck?($0) } })
            #endif
        }
        while true { pause() }
    }
}
