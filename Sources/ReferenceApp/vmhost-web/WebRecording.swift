#if canImport(Glibc)
import Glibc
#endif
import AppComposition
import VMHost
import VMHostWebSocket

/// `vmhost-web --record DIR`: every session recorded to a file of its own, `DIR/session-N.jsonl`
/// (the first N no file has), as `vmhost --record FILE` records its one session: a transcript that
/// `vmhost` replays on stdio (protocol/conformance/README.md, "Recordings"). The `args` line holds
/// the options that serve the same session on stdio: those given, but the web server's own.
@HostActor
final class WebRecording {
    let directory: String
    let arguments: [String]
    let manualClock: Bool
    let secretMembers: Set<String>
    private var next = 1
    /// The recorders of hosts made and not yet tapped.
    private var made: [ObjectIdentifier: (recorder: SessionRecorder, path: String)] = [:]

    /// The options of `vmhost-web` that are the web server's, not the session's.
    nonisolated static let serverOptions: Set<String> = ["listen", "allow-origin", "token", "static", "record", "trace"]

    init(directory: String, arguments: [String], manualClock: Bool, secretMembers: Set<String>) {
        self.directory = directory
        self.arguments = arguments
        self.manualClock = manualClock
        self.secretMembers = secretMembers
    }

    /// A session's host made by `make`, with its recorder current while its kinds are made (so the
    /// app records the session's backend calls). Without a file the session is served unrecorded.
    func host(_ make: () -> Host) -> Host {
        let file: (fd: Int32, path: String, number: Int)
        do throws(SessionRecorder.RecordingError) {
            file = try SessionRecorder.createSessionFile(in: directory, first: next)
        } catch {
            VMHostWebCommand.writeStderr("vmhost-web: \(error); the session is not recorded\n")
            return make()
        }
        next = file.number + 1
        let recorder = SessionRecorder(fd: file.fd, arguments: arguments, manualClock: manualClock)
        SessionRecorder.current = recorder
        let host = make()
        SessionRecorder.current = nil
        recorder.configure(for: host, secretMembers: secretMembers)
        made[ObjectIdentifier(host)] = (recorder, file.path)
        return host
    }

    /// What records the traffic of `host`'s session.
    func tap(_ host: Host) -> SessionTap? {
        guard let (recorder, path) = made.removeValue(forKey: ObjectIdentifier(host)) else { return nil }
        VMHostWebCommand.writeStderr("vmhost-web: recording a session to \(path)\n")
        return SessionTap(
            incoming: { [weak host] message in recorder.incoming(message, hostHasShutDown: host?.hasShutDown ?? false) },
            outgoing: { body in recorder.outgoing(body) },
            closing: { unwritten in
                for body in unwritten { recorder.outgoing(body) }
                recorder.inputEnded()
            },
            closed: { cancelled in
                for body in cancelled { recorder.outgoing(body) }
                recorder.finish()
                VMHostWebCommand.writeStderr("vmhost-web: recorded a session to \(path)\n")
            })
    }
}
