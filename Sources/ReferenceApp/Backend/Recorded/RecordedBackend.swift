#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// The backend of `--backend recorded:FILE`: answers every call with the one a recording kept
/// (``RecordedExchange``, the `{"backend": …}` lines of FILE), so a session recorded against any
/// backend replays with none (protocol/backend.md, "Recorded backend").
///
/// A call takes the first recorded exchange not used yet whose method, path (with its query) and
/// body are the call's; a `"$secret:…"` placeholder in a recorded body stands for any text (the
/// recording never holds the secret, and the replay's secret is the one the client sent). It then
/// waits the recorded time on the host's clock and answers as recorded: the envelope, the failure,
/// or, for a call that was cancelled, nothing until it is cancelled again or the deadline
/// (`--timeout-ms`) passes. A call with no recorded answer fails as `network`, its `detail`
/// naming the method and path, so a replay shows where the session went another way.
///
/// The response's secrets stay placeholders: a token answered is the text `"$secret:token:N"`,
/// which the app only sends back.
@HostActor
public final class RecordedBackend: EnvelopeExchanging {
    public let clock: any HostClock
    public let timeout: Duration
    /// The file the exchanges came from.
    public let path: String
    /// The token of the last login (never checked).
    public var token: String?
    private var exchanges: [RecordedExchange]
    private var used: [Bool]

    /// The largest file read: 256 MiB.
    public nonisolated static let maxFileBytes = 256 << 20
    /// The most exchanges a file may hold.
    public nonisolated static let maxExchanges = 1_000_000

    /// A backend answering with `exchanges`, in that order of preference.
    public init(exchanges: [RecordedExchange], path: String = "", clock: any HostClock, timeout: Duration) {
        self.exchanges = exchanges
        self.used = Array(repeating: false, count: exchanges.count)
        self.path = path
        self.clock = clock
        self.timeout = timeout
    }

    /// Reads the `{"backend": …}` lines of the file at `path` (a recording; other steps, laid out
    /// over several lines or not, are skipped: ``RecordingSteps``). A file that cannot be read, is
    /// too large, or holds a step that is not JSON or a malformed exchange is an error naming the
    /// file and the line.
    public convenience init(path: String, clock: any HostClock, timeout: Duration) throws(RecordedBackendError) {
        let bytes = try Self.contents(of: path)
        var exchanges: [RecordedExchange] = []
        for (number, line) in RecordingSteps.steps(of: bytes) {
            let json: JSON
            do throws(RecordingSteps.NotJSON) {
                json = try RecordingSteps.parse(line, at: number)
            } catch {
                throw RecordedBackendError("\(path):\(error.line): not JSON (\(error.reason))")
            }
            guard let value = json["backend"] else { continue }
            guard exchanges.count < Self.maxExchanges else {
                throw RecordedBackendError("\(path):\(number): more than \(Self.maxExchanges) backend exchanges")
            }
            do throws(RecordedBackendError) {
                exchanges.append(try RecordedExchange(json: value))
            } catch {
                throw RecordedBackendError("\(path):\(number): backend: \(error.message)")
            }
        }
        self.init(exchanges: exchanges, path: path, clock: clock, timeout: timeout)
    }

    /// The exchanges not used yet.
    public var remainingCount: Int { used.lazy.filter { !$0 }.count }

    package func exchange(_ request: APIRequest) async throws -> Envelope {
        try Task.checkCancellation()
        let (method, path) = RecordedExchange.target(of: request)
        guard let index = exchanges.indices.first(where: { index in
            !used[index] && exchanges[index].method == method && exchanges[index].path == path
                && Self.bodyMatches(exchanges[index].body, request.body)
        }) else {
            let recorded = exchanges.indices.filter { exchanges[$0].method == method && exchanges[$0].path == path }
            let why =
                recorded.isEmpty
                ? "none was recorded for this method and path"
                : "\(recorded.count) recorded for this method and path, \(recorded.filter { used[$0] }.count) used, the others with another body"
            throw BackendError.network("no recorded answer for \(method) \(path) (recorded backend: \(why))")
        }
        used[index] = true
        let exchange = exchanges[index]
        if case .cancelled = exchange.outcome {
            // Cancelled when it was recorded: nothing comes, until it is cancelled again or times out.
            try await clock.sleep(for: timeout)
            throw BackendError.timeout()
        }
        if exchange.milliseconds > 0 {
            try await clock.sleep(for: .milliseconds(exchange.milliseconds))
        }
        try Task.checkCancellation()
        switch exchange.outcome {
        case .response(let envelope): return envelope
        case .error(let error): throw error
        case .cancelled: throw CancellationError()
        }
    }

    /// Whether a recorded body stands for the one sent: equal JSON, where a recorded
    /// `"$secret:…"` string stands for any string.
    static func bodyMatches(_ recorded: JSON?, _ sent: JSON?) -> Bool {
        switch (recorded, sent) {
        case (nil, nil): return true
        case (let recorded?, let sent?): return matches(recorded, sent)
        default: return false
        }
    }

    private static func matches(_ recorded: JSON, _ sent: JSON) -> Bool {
        switch (recorded, sent) {
        case (.string(let pattern), .string(let text)):
            return pattern.hasPrefix("$secret:") || pattern == text
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { matches($0, $1) }
        case (.object(let a), .object(let b)):
            return a.count == b.count && a.allSatisfy { member in b[member.key].map { matches(member.value, $0) } ?? false }
        case (.int, _), (.double, _):
            guard let x = recorded.doubleValue, let y = sent.doubleValue else { return false }
            return x == y
        default:
            return recorded == sent
        }
    }

    /// The file's bytes, at most ``maxFileBytes``, read only from a regular file (``RegularFile``).
    private static func contents(of path: String) throws(RecordedBackendError) -> [UInt8] {
        do throws(RegularFile.Failure) {
            return try RegularFile.contents(of: path, limit: maxFileBytes)
        } catch {
            switch error {
            case .unreadable(let reason): throw RecordedBackendError("cannot read the recorded backend \(path): \(reason)")
            case .notRegular: throw RecordedBackendError("the recorded backend \(path) is not a regular file")
            case .tooLarge: throw RecordedBackendError("the recorded backend \(path) is larger than \(maxFileBytes) bytes")
            }
        }
    }
}
