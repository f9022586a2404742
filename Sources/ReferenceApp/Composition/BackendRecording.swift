import Backend
import VMHost

/// The reference app's part of a recording (`--record`, protocol/conformance/README.md,
/// "Recordings") and of its replay with no backend (`--backend recorded:FILE`,
/// protocol/backend.md, "Recorded backend").
extension ReferenceApp {
    /// The client the kinds of a session call: `transport`, with every call kept in `recorder`
    /// as a `{"backend": …}` line when the session is recorded. The recording's `args` line then
    /// leaves `--state-dir` out (a replay must not read or change the directory), and its
    /// `offlineArgs` replay the session from those lines: `--backend recorded:$transcript`.
    @HostActor
    static func recording(_ transport: any APIClient, clock: any HostClock, into recorder: SessionRecorder?) -> any APIClient {
        guard let recorder else { return transport }
        recorder.leaveOut(
            option: "state-dir",
            because: "Recorded with --state-dir: what the directory held is not in the recording, and a replay runs without one.")
        guard let exchanging = transport as? any EnvelopeExchanging else { return transport }
        var offline = SessionRecorder.removing(option: "backend", from: recorder.arguments)
        offline = SessionRecorder.removing(option: "demo-products", from: offline)
        recorder.setOfflineArguments(offline + ["--backend", "recorded:$transcript"])
        let recording = RecordingExchanges(exchanging, clock: clock, recording: SessionExchanges(recorder))
        recorder.onEnd { recording.recordUnfinished() }
        return recording
    }

    /// The backend of `--backend recorded:FILE`, or nil for any other `--backend`. A file that
    /// cannot be used, and `--demo-products` beside it, are usage errors.
    @HostActor
    static func recordedBackend(
        _ text: String, arguments: ParsedArguments, clock: any HostClock, timeout: Duration
    ) throws(UsageError) -> RecordedBackend? {
        guard text.hasPrefix("recorded:") else { return nil }
        let path = String(text.dropFirst("recorded:".count))
        guard !path.isEmpty else { throw UsageError("--backend recorded:FILE: the file is missing") }
        guard arguments.value("demo-products") == nil else {
            throw UsageError("--demo-products applies to the embedded backend only, not to --backend \(text)")
        }
        do throws(RecordedBackendError) {
            return try RecordedBackend(path: path, clock: clock, timeout: timeout)
        } catch {
            throw UsageError("--backend \(text): \(error.message)")
        }
    }

    /// The embedded backend's test controls over a recorded backend: their params are checked as
    /// the embedded backend checks them, and they change nothing, since the recorded answers hold
    /// what they caused; `control.backend.reset` still ends the logins.
    @HostActor
    static func recordedControls(clock: any HostClock, session: AppSession, connectionSessions: ConnectionSessions) -> [TestControl] {
        let check = EmbeddedBackend(clock: clock)
        return [
            control("control.backend.script", params: ["endpoint", "outcomes"]) { (params) throws(ScriptError) in
                try check.script(params: params)
                check.reset()
            },
            control("control.backend.latency", params: ["ms"]) { (params) throws(ScriptError) in try check.setLatency(params: params) },
            control("control.backend.reset", params: []) { _ in
                session.end(.logout)
                connectionSessions.endAll(.logout)
            },
        ]
    }
}

/// A session's recording as the backend's recording wrapper writes to it.
@HostActor
final class SessionExchanges: ExchangeRecording {
    let recorder: SessionRecorder

    init(_ recorder: SessionRecorder) { self.recorder = recorder }

    func record(_ exchange: RecordedExchange) {
        let recorder = recorder
        recorder.record("backend", exchange.json { value, name in recorder.secretPlaceholder(for: value, name: name) })
    }
}
