#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
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
    private let redaction: TraceRedaction
    /// The most bytes this recorder appends (`--max-trace-bytes`), its last line included.
    private let maxBytes: Int
    /// The bytes appended so far; past ``maxBytes`` a last line says why nothing more is.
    private let written = Mutex<Int>(0)

    /// Opens (appending) or creates `path` for a trace, without blocking: a FIFO that no process
    /// reads is refused (ENXIO) rather than waited on. Returns the descriptor.
    public static func open(path: String) throws(TraceError) -> Int32 {
        #if canImport(Glibc)
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0o600)
        #else
        let fd = Darwin.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0o600)
        #endif
        guard fd >= 0 else {
            let reason = errno == ENXIO ? "it is a FIFO that no process reads" : String(cString: strerror(errno))
            throw TraceError(description: "cannot open trace file \(path): \(reason)")
        }
        return fd
    }

    /// The default of `--max-trace-bytes`: 256 MiB.
    public static let defaultMaxBytes = 256 * 1024 * 1024

    /// A recorder appending to `fd` (from ``open(path:)``), masking with `redaction`, at most
    /// `maxBytes` bytes.
    public init(fd: Int32, redaction: Redaction, maxBytes: Int = TraceRecorder.defaultMaxBytes) {
        self.redaction = TraceRedaction(redaction)
        self.maxBytes = maxBytes
        writer = OutputWriter(fd: fd, framing: .ndjson, queue: queue, onClosed: {})
    }

    /// Why a trace file cannot be used.
    public struct TraceError: Error, CustomStringConvertible {
        /// The file and the reason.
        public var description: String
    }

    /// Records one message. `dir` is `in` or `out`. Past ``maxBytes`` nothing is: one last line
    /// `{t, "dir": "end", "msg": why}` says so.
    public func record(_ direction: String, _ message: JSON) {
        let line = TraceRecorder.line(direction, redaction.redact(message), origin: origin)
        if let bytes = written.withLock({ TraceRecorder.admit(line, written: &$0, maxBytes: maxBytes, origin: origin) }) {
            for line in bytes { queue.push(line) }
        }
    }

    /// `{t, dir, msg}` serialized, `t` in milliseconds since `origin`.
    package static func line(_ direction: String, _ message: JSON, origin: UInt64) -> [UInt8] {
        let elapsed = Double(EventLoop.monotonicNanoseconds() - origin) / 1_000_000
        let line: JSON = ["t": .double((elapsed * 1000).rounded() / 1000), "dir": .string(direction), "msg": message]
        return line.serialized()
    }

    /// The lines to append for `line` given `written` bytes so far: `line`; past `maxBytes` the
    /// last line saying why (once, within the bound: the bound keeps room for it); then none.
    package static func admit(_ line: [UInt8], written: inout Int, maxBytes: Int, origin: UInt64) -> [[UInt8]]? {
        let room = 256  // the last line's size at most
        guard written >= 0 else { return nil }  // ended
        if line.count + 1 <= maxBytes - room - written {
            written += line.count + 1
            return [line]
        }
        written = -1
        let why = "the trace reached its bound of \(maxBytes) bytes (--max-trace-bytes): nothing more is written"
        return [Self.line("end", .string(why), origin: origin)]
    }

    /// Records one outgoing body as written.
    public func recordOutgoing(_ body: [UInt8]) {
        if let message = try? JSON.parse(body) { record("out", message) }
    }

    /// Waits (at most `nanoseconds`) until everything recorded is written.
    public func flush(nanoseconds: UInt64) { _ = queue.waitUntilFlushed(nanoseconds: nanoseconds) }
}

/// The redaction of a trace: ``Redaction``'s rules, and a secret quoted back. Every text it
/// masks in a message (the value sent to a secret input, say) is remembered, and a later string
/// equal to one of three characters or more, or holding one of four or more inside it (a server
/// message quoting a password), is masked too, in either direction (SPEC §8).
@_spi(Transport)
public final class TraceRedaction: Sendable {
    private let rules: Redaction
    /// The texts masked so far, the most recent last (at most ``maxTexts``, each cut to
    /// ``maxTextScalars``: a string holding the cut text inside is masked, so nothing leaks).
    private let texts = Mutex<[String]>([])
    static let maxTexts = 64
    static let maxTextScalars = 1024

    /// Masking by `rules`, and what they masked wherever it is quoted later.
    public init(_ rules: Redaction) { self.rules = rules }

    /// `message` with its secrets, and the secrets masked before, replaced by ``Redaction/mask``.
    public func redact(_ message: JSON) -> JSON {
        var found: [String] = []
        let redacted = rules.redact(message, masked: &found)
        let known = texts.withLock { texts in
            for text in found where text.unicodeScalars.count >= 3 {
                let kept = text.unicodeScalars.count > Self.maxTextScalars
                    ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(Self.maxTextScalars))) : text
                texts.removeAll { $0 == kept }
                texts.append(kept)
                if texts.count > Self.maxTexts { texts.removeFirst() }
            }
            return texts
        }
        return known.isEmpty ? redacted : Self.masking(redacted, known)
    }

    private static func masking(_ value: JSON, _ texts: [String]) -> JSON {
        switch value {
        case .string(let text):
            let quotes = texts.contains { secret in
                text == secret || (secret.unicodeScalars.count >= 4 && text.contains(secret))
            }
            return quotes ? Redaction.mask : value
        case .array(let elements):
            return .array(elements.map { masking($0, texts) })
        case .object(let object):
            var result = JSONObject()
            result.reserveCapacity(object.count)
            for member in object { result.append(member.key, masking(member.value, texts)) }
            return .object(result)
        default:
            return value
        }
    }
}

/// What is secret in a session's messages and how it is masked, for its trace, its logs and its
/// recording (protocol/SPEC.md §8): the one place that decides. What is secret is declared: the
/// inputs declared `secret` by the kinds served, and the member names an app adds (a `token`).
/// A trace writes a secret as ``mask`` (``redact(_:)``); a recording as a placeholder naming it
/// (``placeholder(for:source:needed:)``), which a replay fills. Made for a host by
/// ``Host/redaction(secretMembers:)``.
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
    /// The app's own secret members (``secretMembers`` without the secret inputs): what is secret
    /// in the host's messages to a recording, where an input's name is no secret.
    package var appSecretMembers: Set<String>
    /// The secrets a recording named so far.
    var placeholders = SecretPlaceholders()
    /// What a secret is written as in a trace.
    package static let mask: JSON = "***"

    /// Rules showing the values of `plainInputs` only, and masking the inputs `secretInputs` and
    /// the members `secretMembers` wherever they appear.
    package init(plainInputs: Set<String>, secretInputs: Set<String>, secretMembers: Set<String> = []) {
        self.appSecretMembers = secretMembers
        self.secretMembers = secretMembers.union(secretInputs)
        self.plainInputs = plainInputs.subtracting(self.secretMembers)
    }

    /// What becomes of a member of a `vm.send`'s params by name (`params` by position or of no
    /// structured type are secret whole).
    package enum SendMember: Equatable {
        /// Shown: `vm` and `input` when strings, and `value` of a plain input.
        case shown
        /// Secret, named after `source` (the input, or the member).
        case secret(source: String)
    }

    /// The rule of a `vm.send`: `vm` and `input` shown when strings, `value` only when the input
    /// (`params.input`) is declared plain; every other member, and `vm` or `input` of another
    /// type, secret. A refused or malformed send leaks no more than an accepted one.
    package func sendMember(_ key: String, _ value: JSON, of params: JSONObject) -> SendMember {
        switch (key, value) {
        case ("vm", .string), ("input", .string):
            return .shown
        case ("value", _):
            guard case .string(let input)? = params["input"] else { return .secret(source: "value") }
            return plainInputs.contains(input) ? .shown : .secret(source: input)
        default:
            return .secret(source: key)
        }
    }

    /// `message` with every secret replaced by ``mask``.
    package func redact(_ message: JSON) -> JSON {
        var masked: [String] = []
        return redact(message, masked: &masked)
    }

    /// `message` with every secret replaced by ``mask``; the strings masked are added to `masked`.
    package func redact(_ message: JSON, masked: inout [String]) -> JSON {
        switch message {
        case .array(let elements):
            return .array(elements.map { redact($0, masked: &masked) })
        case .object(let object):
            let isSend = object["method"] == .string("vm.send")
            var result = JSONObject()
            result.reserveCapacity(object.count)
            for member in object {
                if isSend && member.key == "params" {
                    result.append(member.key, redactSend(member.value, masked: &masked))
                } else if secretMembers.contains(member.key), case .string(let text) = member.value {
                    masked.append(text)
                    result.append(member.key, Self.mask)
                } else {
                    result.append(member.key, redact(member.value, masked: &masked))
                }
            }
            return .object(result)
        default:
            return message
        }
    }

    /// The params of a `vm.send`: only the handle, the input's name and a plain input's value
    /// shown; params by position, or of no structured type, masked whole.
    private func redactSend(_ params: JSON, masked: inout [String]) -> JSON {
        switch params {
        case .object(let object):
            var result = JSONObject()
            for member in object {
                if sendMember(member.key, member.value, of: object) == .shown {
                    result.append(member.key, member.value)
                } else {
                    Self.strings(in: member.value, into: &masked)
                    result.append(member.key, Self.mask)
                }
            }
            return .object(result)
        case .array(let elements):
            for element in elements { Self.strings(in: element, into: &masked) }
            return .array(elements.map { _ in Self.mask })
        default:
            Self.strings(in: params, into: &masked)
            return Self.mask
        }
    }

    /// Every string of `value`, at any depth.
    private static func strings(in value: JSON, into found: inout [String]) {
        switch value {
        case .string(let text): found.append(text)
        case .array(let elements): for element in elements { strings(in: element, into: &found) }
        case .object(let object): for member in object { strings(in: member.value, into: &found) }
        default: break
        }
    }
}
