#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWire

/// `--trace FILE`: every message in and out appended as NDJSON `{t, dir, msg}`, secrets redacted
/// (see ``Redaction``).
///
/// Writing happens on a writer thread of its own, so a slow disk (or a FIFO whose reader stalls)
/// never blocks the host.
@_spi(Transport)
public final class TraceRecorder: Sendable {
    private let queue = OutputQueue<PlainOnly>()
    private let writer: OutputWriter<PlainOnly>
    private let origin = EventLoop.monotonicNanoseconds()
    private let redaction: Redaction

    /// Opens (appending) or creates `path` for a trace, without blocking: a FIFO that no process
    /// reads is refused (ENXIO) rather than waited on. Returns the descriptor.
    public static func open(path: String) throws(TraceError) -> Int32 {
        #if canImport(Glibc)
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0o644)
        #else
        let fd = Darwin.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0o644)
        #endif
        guard fd >= 0 else {
            let reason = errno == ENXIO ? "it is a FIFO that no process reads" : String(cString: strerror(errno))
            throw TraceError(description: "cannot open trace file \(path): \(reason)")
        }
        return fd
    }

    /// A recorder appending to `fd` (from ``open(path:)``), masking with `redaction`.
    public init(fd: Int32, redaction: Redaction) {
        self.redaction = redaction
        writer = OutputWriter(fd: fd, framing: .ndjson, queue: queue, onClosed: {})
    }

    /// Why a trace file cannot be used.
    public struct TraceError: Error, CustomStringConvertible {
        /// The file and the reason.
        public var description: String
    }

    /// Records one message. `dir` is `in` or `out`.
    public func record(_ direction: String, _ message: JSON) {
        let elapsed = Double(EventLoop.monotonicNanoseconds() - origin) / 1_000_000
        let line: JSON = [
            "t": .double((elapsed * 1000).rounded() / 1000), "dir": .string(direction), "msg": redaction.redact(message),
        ]
        queue.push(line.serialized())
    }

    /// Records one outgoing body as written.
    public func recordOutgoing(_ body: [UInt8]) {
        if let message = try? JSON.parse(body) { record("out", message) }
    }

    /// Waits (at most `nanoseconds`) until everything recorded is written.
    public func flush(nanoseconds: UInt64) { _ = queue.waitUntilFlushed(nanoseconds: nanoseconds) }
}

/// The redaction rules for traces and logs (protocol/SPEC.md §8). What is secret is declared: the
/// inputs declared `secret` by the kinds served, and the member names an app adds (a `token`).
/// Made for a host by ``Host/redaction(secretMembers:)``.
///
/// - In a `vm.send`, `vm` and `input` are kept when strings, and `value` only when the input is
///   declared by a kind served and secret in none. Everything else is masked, whatever its type:
///   the value of a secret, unknown or absent input, members the method does not take, and every
///   element of params by position. A refused or malformed send leaks no more than an accepted one.
/// - Elsewhere, at any depth, the string value of a member named like a secret input or a secret
///   member becomes `"***"`. Numbers are kept: JSON-RPC error codes and HTTP statuses are no secrets.
@_spi(Transport)
public struct Redaction: Sendable {
    /// Names of the inputs whose values are shown (declared, and secret in no kind).
    package var plainInputs: Set<String>
    /// Names of members whose string values are masked at any depth (the secret inputs' too).
    package var secretMembers: Set<String>
    /// What a secret is written as.
    package static let mask: JSON = "***"

    /// Rules showing the values of `plainInputs` only, and masking the inputs `secretInputs` and
    /// the members `secretMembers` wherever they appear.
    package init(plainInputs: Set<String>, secretInputs: Set<String>, secretMembers: Set<String> = []) {
        self.secretMembers = secretMembers.union(secretInputs)
        self.plainInputs = plainInputs.subtracting(self.secretMembers)
    }

    /// `message` with every secret replaced by ``mask``.
    package func redact(_ message: JSON) -> JSON {
        switch message {
        case .array(let elements):
            return .array(elements.map(redact))
        case .object(var object):
            if case .string("vm.send")? = object["method"], let params = object["params"] {
                object["params"] = redactSend(params)
            }
            var result = JSONObject()
            result.reserveCapacity(object.count)
            for member in object {
                if secretMembers.contains(member.key), case .string = member.value {
                    result.append(member.key, Self.mask)
                } else {
                    result.append(member.key, redact(member.value))
                }
            }
            return .object(result)
        default:
            return message
        }
    }

    /// The params of a `vm.send`: only the handle, the input's name and a plain input's value shown.
    private func redactSend(_ params: JSON) -> JSON {
        switch params {
        case .object(let object):
            var plain = false
            if case .string(let input)? = object["input"] { plain = plainInputs.contains(input) }
            var result = JSONObject()
            for member in object {
                switch (member.key, member.value) {
                case ("vm", .string), ("input", .string): result.append(member.key, member.value)
                case ("value", _) where plain: result.append(member.key, member.value)
                default: result.append(member.key, Self.mask)
                }
            }
            return .object(result)
        case .array(let elements):
            return .array(elements.map { _ in Self.mask })
        default:
            return params
        }
    }
}
