#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// What a replay leaves out when it matches a request with a recorded one (`--http-replay-ignore`):
/// header fields, query parameters and JSON body members (at any depth) that change from run to
/// run (a request id, a timestamp).
public struct HTTPReplayIgnoring: Sendable, Hashable {
    /// Header field names (compared without regard to case).
    public var headers: Set<String>
    /// Query parameter names.
    public var query: Set<String>
    /// JSON member names, at any depth of the body.
    public var members: Set<String>

    public init(headers: Set<String> = [], query: Set<String> = [], members: Set<String> = []) {
        self.headers = Set(headers.map { $0.lowercased() })
        self.query = query
        self.members = members
    }

    /// The list of `--http-replay-ignore`: `header:NAME`, `query:NAME` and `body:NAME`, separated
    /// by commas (`header:X-Request-Id,query:ts,body:sentAt`).
    public init(list: String) throws(HTTPReplayError) {
        self.init()
        for item in list.split(separator: ",", omittingEmptySubsequences: true) {
            let parts = item.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, !parts[1].isEmpty else {
                throw HTTPReplayError("expected header:NAME, query:NAME or body:NAME, got \"\(item.prefix(64))\"")
            }
            let name = String(parts[1])
            switch parts[0] {
            case "header": headers.insert(name.lowercased())
            case "query": query.insert(name)
            case "body": members.insert(name)
            default: throw HTTPReplayError("expected header:NAME, query:NAME or body:NAME, got \"\(item.prefix(64))\"")
            }
        }
    }
}

/// The transport of `--http-replay FILE`: answers every call of every ``HTTPClient`` with the
/// one a recording kept (its `{"http": …}` lines, protocol/backend.md, "Recorded HTTP"), with no
/// server.
///
/// A call takes the first recorded exchange not used yet whose method, path, query parameters,
/// header fields and body are the call's: a recorded `"$secret:…"` (a masked value) stands for
/// any value, and what ``HTTPReplayIgnoring`` names is left out on both sides. It waits the
/// recorded time on the host's clock (at most the call's deadline) and answers as recorded: the
/// response, the transport's failure, or, for an exchange cancelled when it was recorded, nothing
/// until the call is cancelled or its deadline passes. A call with no recorded answer fails as
/// ``HTTPError/Kind/notRecorded``, naming its method and path (never its query or body).
@HostActor
package final class HTTPReplay: HTTPTransport {
    /// The largest file read: 256 MiB.
    package nonisolated static let maxFileBytes = 256 << 20
    /// The most exchanges a file may hold.
    package nonisolated static let maxExchanges = 1_000_000

    private let exchanges: [RecordedHTTPExchange]
    private var used: [Bool]
    private let ignoring: HTTPReplayIgnoring
    /// Named in the error of a call with no answer.
    private let source: String

    init(exchanges: [RecordedHTTPExchange], ignoring: HTTPReplayIgnoring, source: String) {
        self.exchanges = exchanges
        used = Array(repeating: false, count: exchanges.count)
        self.ignoring = ignoring
        self.source = source
    }

    /// The `{"http": …}` lines of `bytes` (a recording), other steps skipped (laid out over
    /// several lines or not: ``RecordingSteps``).
    package convenience init(recording bytes: [UInt8], ignoring: HTTPReplayIgnoring, source: String) throws(HTTPReplayError) {
        var exchanges: [RecordedHTTPExchange] = []
        for (number, line) in RecordingSteps.steps(of: bytes) {
            let json: JSON
            do throws(RecordingSteps.NotJSON) {
                json = try RecordingSteps.parse(line, at: number)
            } catch {
                throw HTTPReplayError("\(source):\(error.line): not JSON")
            }
            guard let value = json["http"] else { continue }
            guard exchanges.count < Self.maxExchanges else {
                throw HTTPReplayError("\(source):\(number): more than \(Self.maxExchanges) HTTP exchanges")
            }
            do throws(HTTPReplayError) {
                exchanges.append(try RecordedHTTPExchange(json: value))
            } catch {
                throw HTTPReplayError("\(source):\(number): http: \(error.message)")
            }
        }
        self.init(exchanges: exchanges, ignoring: ignoring, source: source)
    }

    /// The exchanges of the recording at `path`.
    package convenience init(path: String, ignoring: HTTPReplayIgnoring) throws(HTTPReplayError) {
        try self.init(recording: try Self.contents(of: path), ignoring: ignoring, source: path)
    }

    package func carry(_ call: HTTPCall) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let method = call.method.rawValue
        let (path, query) = Self.split(call.url.pathAndQuery)
        let sentBody = call.body.map(RecordedHTTPExchange.Body.init)
        let sameTarget = exchanges.indices.filter { index in
            exchanges[index].method == method && Self.split(exchanges[index].path).path == path
        }
        guard let index = sameTarget.first(where: { index in
            let recorded = exchanges[index]
            return !used[index] && queryMatches(Self.split(recorded.path).query, query)
                && headersMatch(recorded.headers, call.headers.fields.map { ($0.name, $0.value) })
                && bodyMatches(recorded.recordedBody, sentBody)
        }) else {
            let why =
                sameTarget.isEmpty
                ? "none was recorded for this method and path"
                : "\(sameTarget.count) recorded for this method and path, \(sameTarget.filter { used[$0] }.count) used, the others with other query parameters, header fields or body"
            throw HTTPError(.notRecorded, "\(method) \(path) was not recorded (--http-replay \(source): \(why))")
        }
        used[index] = true
        let exchange = exchanges[index]
        let recorded = Duration.milliseconds(exchange.milliseconds)
        if case .cancelled = exchange.outcome {
            // Cancelled when it was recorded: nothing comes, until it is cancelled again or times out.
            try await call.clock.sleep(for: call.timeout)
            throw HTTPError(.timedOut, "the request timed out")
        }
        if recorded >= call.timeout {
            try await call.clock.sleep(for: call.timeout)
            throw HTTPError(.timedOut, "the request timed out")
        }
        if exchange.milliseconds > 0 { try await call.clock.sleep(for: recorded) }
        try Task.checkCancellation()
        switch exchange.outcome {
        case .response(let response):
            guard response.body.count <= call.maxResponseBytes else { throw HTTPError.tooLarge(limit: call.maxResponseBytes) }
            return response
        case .error(let error): throw error
        case .cancelled: throw CancellationError()
        }
    }

    // MARK: Matching

    /// The path and the query parameters (decoded) of a request target.
    static func split(_ target: String) -> (path: String, query: [(String, String)]) {
        guard let mark = target.firstIndex(of: "?") else { return (target, []) }
        let items = target[target.index(after: mark)...].split(separator: "&").map { item -> (String, String) in
            guard let equals = item.firstIndex(of: "=") else { return (PercentDecoding.decode(item), "") }
            return (PercentDecoding.decode(item[..<equals]), PercentDecoding.decode(item[item.index(after: equals)...]))
        }
        return (String(target[..<mark]), items)
    }

    private func queryMatches(_ recorded: [(String, String)], _ sent: [(String, String)]) -> Bool {
        let recorded = recorded.filter { !ignoring.query.contains($0.0) }
        let sent = sent.filter { !ignoring.query.contains($0.0) }
        return recorded.count == sent.count && zip(recorded, sent).allSatisfy { $0.0 == $1.0 && Self.valueMatches($0.1, $1.1) }
    }

    /// The same fields, by name (in any order between names, in order within one).
    private func headersMatch(_ recorded: [(String, String)], _ sent: [(String, String)]) -> Bool {
        func kept(_ fields: [(String, String)]) -> [(String, String)] {
            fields.map { ($0.0.lowercased(), $0.1) }.filter { !ignoring.headers.contains($0.0) }
                .enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element)
        }
        let recorded = kept(recorded)
        let sent = kept(sent)
        return recorded.count == sent.count && zip(recorded, sent).allSatisfy { $0.0 == $1.0 && Self.valueMatches($0.1, $1.1) }
    }

    private func bodyMatches(_ recorded: RecordedHTTPExchange.Body?, _ sent: RecordedHTTPExchange.Body?) -> Bool {
        switch (recorded, sent) {
        case (nil, nil): return true
        case (.json(let a)?, .json(let b)?): return jsonMatches(a, b)
        case (.text(let a)?, .text(let b)?): return Self.valueMatches(a, b)
        case (.bytes(let a)?, .bytes(let b)?): return a == b
        case (.text(let a)?, nil), (.text(let a)?, .bytes([])?): return a.isEmpty
        case (nil, .text(let b)?): return b.isEmpty
        default: return false
        }
    }

    private func jsonMatches(_ recorded: JSON, _ sent: JSON) -> Bool {
        switch (recorded, sent) {
        case (.string(let pattern), .string(let text)):
            return Self.valueMatches(pattern, text)
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { jsonMatches($0, $1) }
        case (.object(let a), .object(let b)):
            let a = a.filter { !ignoring.members.contains($0.key) }
            let b = b.filter { !ignoring.members.contains($0.key) }
            return a.count == b.count
                && a.allSatisfy { member in b.first { $0.key == member.key }.map { jsonMatches(member.value, $0.value) } ?? false }
        case (.int, _), (.double, _):
            guard let x = recorded.doubleValue, let y = sent.doubleValue else { return false }
            return x == y
        default:
            return recorded == sent
        }
    }

    /// A recorded value stands for a sent one: equal, or a masked secret (`"$secret:…"`).
    static func valueMatches(_ recorded: String, _ sent: String) -> Bool {
        recorded == sent || recorded.hasPrefix("$secret:")
    }

    // MARK: The file

    /// The file's bytes, at most ``maxFileBytes``, read only from a regular file (``RegularFile``).
    private static func contents(of path: String) throws(HTTPReplayError) -> [UInt8] {
        do throws(RegularFile.Failure) {
            return try RegularFile.contents(of: path, limit: maxFileBytes)
        } catch {
            switch error {
            case .unreadable(let reason): throw HTTPReplayError("cannot read the recording \(path): \(reason)")
            case .notRegular: throw HTTPReplayError("the recording \(path) is not a regular file")
            case .tooLarge: throw HTTPReplayError("the recording \(path) is larger than \(maxFileBytes) bytes")
            }
        }
    }
}
