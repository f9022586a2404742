#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWire

// `--record FILE` on stdio: the hooks of ``StdioServer`` and ``ServerLifecycle`` into a
// ``SessionRecorder``.

extension StdioServer {
    /// Opens the file of `--record`, if given (before signals are blocked); a file that cannot be
    /// used ends the process at start with status 2, as a trace file does.
    static func openRecording(_ settings: ServerSettings, name: String) -> Int32? {
        guard let path = settings.recordPath else { return nil }
        do throws(SessionRecorder.RecordingError) {
            return try SessionRecorder.create(path: path)
        } catch {
            ProcessOutput.stderr("\(name): \(error)\n")
            exit(traceErrorStatus)
        }
    }
}

@HostActor
extension ServerLifecycle {
    /// The recording of `--record`, if any.
    static var recorder: SessionRecorder?

    /// Starts the recording before the app's kinds are made, so that the app can add its lines
    /// and adjust the `args` line (``SessionRecorder/current``). The `args` line holds the options
    /// given, but `--record`, `--trace` (the recording session's own files) and `--framing` (a
    /// transcript is ndjson; the messages are the same in any framing).
    static func startRecording(fd: Int32?, server: Server, settings: ServerSettings, arguments: ParsedArguments) {
        guard let fd else { return }
        let recorded = SessionRecorder.recordedArguments(
            arguments, options: server.allOptions, leavingOut: ["record", "trace", "framing"])
        let recorder = SessionRecorder(
            fd: fd, arguments: recorded, manualClock: settings.manualClock, maxBytes: settings.maxRecordBytes,
            budget: settings.recordBudget)
        self.recorder = recorder
        SessionRecorder.current = recorder
    }

    /// Records what `host` reads and writes: returns `observe` (what sees every body written)
    /// extended with the recording.
    static func attachRecording(
        to host: Host, secretMembers: Set<String>, observe: (@Sendable ([UInt8]) -> Void)?
    ) -> (@Sendable ([UInt8]) -> Void)? {
        SessionRecorder.current = nil
        guard let recorder else { return observe }
        recorder.attach(to: host, secretMembers: secretMembers)
        return { body in
            observe?(body)
            recorder.outgoing(body)
        }
    }

    /// The host ends (`end` and `code` as ``terminate(code:end:)`` has them): what was
    /// queued is written first (for at most 200 ms, as a client that reads takes it), so that it
    /// stands before the `close` step, or the `exit` step when the client sent `exit`. The
    /// requests a signal or a closed output cancel are cancelled in a replay too.
    static func endRecording(_ end: SessionEnd, code: Int32) {
        guard let recorder else { return }
        writer?.flush()
        _ = host?.outputQueue.waitUntilFlushed(nanoseconds: 200_000_000)
        recorder.sessionEnded(end, status: code)
    }

    /// Ends the recording once the output is written.
    static func finishRecording() {
        guard let recorder else { return }
        recorder.finish()
        if recorder.failed { logger.warning("the recording could not be written whole (--record)") }
    }
}
