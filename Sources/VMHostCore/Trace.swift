#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VMHostEventLoop
import VMHostWire

/// `--trace FILE`: every message in and out appended as NDJSON `{t, dir, msg}`, secrets redacted.
///
/// Writing happens on a writer thread of its own, so a slow disk never blocks the host.
public final class TraceRecorder: Sendable {
    private let queue = OutputQueue<PlainOnly>()
    private let writer: OutputWriter<PlainOnly>
    private let origin = EventLoop.monotonicNanoseconds()

    /// Opens (appending) or creates `path`; nil with a reason when it cannot be opened.
    public init(path: String) throws(TraceError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TraceError(description: "cannot open trace file \(path): \(String(cString: strerror(errno)))") }
        writer = OutputWriter(fd: fd, framing: .ndjson, queue: queue, onClosed: {})
    }

    public struct TraceError: Error, CustomStringConvertible { public var description: String }

    /// Records one message. `dir` is `in` or `out`.
    public func record(_ direction: String, _ message: JSON) {
        let elapsed = Double(EventLoop.monotonicNanoseconds() - origin) / 1_000_000
        let line: JSON = ["t": .double((elapsed * 1000).rounded() / 1000), "dir": .string(direction), "msg": Redaction.redact(message)]
        queue.push(line.serialized())
    }

    /// Records one outgoing body as written.
    public func recordOutgoing(_ body: [UInt8]) {
        if let message = try? JSON.parse(body) { record("out", message) }
    }

    /// Waits (at most `nanoseconds`) until everything recorded is written.
    public func flush(nanoseconds: UInt64) { _ = queue.waitUntilFlushed(nanoseconds: nanoseconds) }
}

/// The redaction rules for traces and logs.
///
/// - The string value of any member named `password`, `code` or `token`, at any depth, becomes
///   `"***"`. Numbers are kept: JSON-RPC error codes and HTTP statuses are not secrets.
/// - The `value` of a `vm.send` whose `input` is `password`, `code` or `token` becomes `"***"`,
///   whatever its type.
public enum Redaction {
    public static let secretNames: Set<String> = ["password", "code", "token"]
    public static let mask: JSON = "***"

    public static func redact(_ message: JSON) -> JSON {
        switch message {
        case .array(let elements):
            return .array(elements.map(redact))
        case .object(var object):
            if case .string(let method)? = object["method"], method == "vm.send",
                case .object(var params)? = object["params"],
                case .string(let input)? = params["input"], secretNames.contains(input), params["value"] != nil
            {
                params["value"] = mask
                object["params"] = .object(params)
            }
            var result = JSONObject()
            result.reserveCapacity(object.count)
            for member in object {
                if secretNames.contains(member.key), case .string = member.value {
                    result.append(member.key, mask)
                } else {
                    result.append(member.key, redact(member.value))
                }
            }
            return .object(result)
        default:
            return message
        }
    }
}
