import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// What a recording keeps of an ``HTTPClient``'s exchanges as secrets: written as `"$secret:…"`
/// placeholders, never in clear (protocol/backend.md, "Recorded HTTP").
///
/// - the values of the header fields named in ``headers`` (`Authorization`, `Proxy-Authorization`,
///   `Cookie`, `Set-Cookie` by default; an app adds its own, an `X-Api-Key`), in requests and responses;
/// - in a JSON body (request or response), the string values of the members the app declares
///   secret and of every credential-like member (``isCredential(_:)``), at any depth;
/// - the values of credential-like query parameters (`?api_key=…`).
public struct HTTPSecrets: Sendable, Hashable {
    /// The header fields masked by default.
    public static let defaultHeaders: Set<String> = ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"]

    /// Header field names whose values are secret (compared without regard to case).
    public var headers: Set<String>
    /// JSON member names whose string values are secret, besides the credential-like ones.
    public var members: Set<String>

    public init(headers: Set<String> = HTTPSecrets.defaultHeaders, members: Set<String> = []) {
        self.headers = headers
        self.members = members
    }

    /// What a credential-like member's name holds (compared without regard to case, `_` and `-`
    /// left out): the rule of every recording (`password`, `refreshToken`, `smsCode`, `clientSecret`).
    public static let credentialWords = ["password", "passwd", "secret", "token", "credential", "code", "cookie", "apikey"]

    /// Whether the member `name` is credential-like (``credentialWords``).
    public static func isCredential(_ name: String) -> Bool {
        let folded = String(name.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" })
        return credentialWords.contains { folded.contains($0) }
    }

    /// Whether the values of the member or query parameter `name` are secret. In a response
    /// (`inResponse`), a member named `code`, `errorCode`, `statusCode` or `resultCode` is the
    /// server's verdict (an envelope's `"code": "1001"`), not a credential: masking it would make
    /// its text a secret of the whole recording, masked wherever the app shows it.
    public func isSecretMember(_ name: String, inResponse: Bool = false) -> Bool {
        if members.contains(name) { return true }
        if inResponse {
            let folded = String(name.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" })
            if Self.verdictNames.contains(folded) { return false }
        }
        return Self.isCredential(name)
    }

    /// The names (folded) of a response's verdict codes.
    static let verdictNames: Set<String> = ["code", "errorcode", "statuscode", "resultcode"]

    /// Whether the header field `name` holds a secret.
    public func isSecretHeader(_ name: String) -> Bool {
        let key = name.lowercased()
        return headers.contains { $0.lowercased() == key }
    }
}

/// Where the exchanges of a session's ``HTTPClient``s are written as `{"http": …}` lines: the
/// session's recording. Secrets are masked (``HTTPSecrets``) with the recording's placeholders.
@HostActor
package final class HTTPExchangeRecording {
    let secrets: HTTPSecrets
    /// The placeholder of a secret value, by the member or field it was found in.
    let placeholder: (_ value: String, _ name: String) -> String
    /// Writes a line's value.
    let write: (JSON) -> Void

    /// Calls started and not ended, by number: what ``recordUnfinished()`` writes.
    private var inFlight: [Int: (call: HTTPCall, start: Duration)] = [:]
    private var nextCall = 0

    package init(secrets: HTTPSecrets, placeholder: @escaping (String, String) -> String, write: @escaping (JSON) -> Void) {
        self.secrets = secrets
        self.placeholder = placeholder
        self.write = write
    }

    /// A transport that carries calls through `base` and records each as it ends.
    package func transport(around base: any HTTPTransport) -> any HTTPTransport {
        RecordingHTTPTransport(base: base, recording: self)
    }

    func begin(_ call: HTTPCall) -> Int {
        nextCall += 1
        inFlight[nextCall] = (call, call.clock.now)
        return nextCall
    }

    func end(_ number: Int, _ outcome: RecordedHTTPExchange.Outcome) {
        guard let (call, start) = inFlight.removeValue(forKey: number) else { return }
        record(call, start: start, outcome)
    }

    /// Writes the calls that have not ended as cancelled: the session ends while they are in flight.
    package func recordUnfinished() {
        for number in inFlight.keys.sorted() { end(number, .cancelled) }
    }

    private func record(_ call: HTTPCall, start: Duration, _ outcome: RecordedHTTPExchange.Outcome) {
        let elapsed = call.clock.now - start
        let ms = max(0, min(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000, Int64(RecordedHTTPExchange.maxMilliseconds)))
        let exchange = RecordedHTTPExchange(
            method: call.method.rawValue, path: call.url.pathAndQuery, headers: call.headers.fields.map { ($0.name, $0.value) },
            body: call.body, milliseconds: Int(ms), outcome: outcome)
        write(exchange.json(secrets: secrets, placeholder: placeholder))
    }
}

/// A transport that records every call another one carries, as it ends.
@HostActor
final class RecordingHTTPTransport: HTTPTransport {
    let base: any HTTPTransport
    let recording: HTTPExchangeRecording

    init(base: any HTTPTransport, recording: HTTPExchangeRecording) {
        self.base = base
        self.recording = recording
    }

    func carry(_ call: HTTPCall) async throws -> HTTPResponse {
        let number = recording.begin(call)
        do {
            let response = try await base.carry(call)
            recording.end(number, .response(response))
            return response
        } catch let error as HTTPError {
            recording.end(number, .error(error))
            throw error
        } catch {
            recording.end(number, .cancelled)
            throw error
        }
    }
}

/// One exchange of an ``HTTPClient`` as a recording keeps it, on a line `{"http": …}`
/// (protocol/backend.md, "Recorded HTTP"):
///
/// ```json
/// {"method":"POST","path":"/api/notes?draft=1","headers":[["Content-Type","application/json"],["Authorization","$secret:Authorization:6"]],"body":{"text":"hi"},"ms":0,
///  "response":{"status":201,"headers":[["Content-Type","application/json"]],"body":{"id":"n1"}}}
/// {"method":"GET","path":"/api/slow","headers":[],"ms":10000,"error":{"kind":"timedOut","detail":"the request timed out"}}
/// {"method":"GET","path":"/api/feed","headers":[],"ms":3000,"cancelled":true}
/// ```
///
/// A body is `"body"` when it is JSON, `"text"` when it is other UTF-8, `"base64"` otherwise.
struct RecordedHTTPExchange {
    enum Outcome {
        case response(HTTPResponse)
        case error(HTTPError)
        case cancelled
    }

    /// The longest wait a line may hold: a day.
    static let maxMilliseconds = 86_400_000

    var method: String
    /// The path and its query, percent-encoded, as the request line has them.
    var path: String
    var headers: [(String, String)]
    var body: [UInt8]?
    var milliseconds: Int
    var outcome: Outcome

    /// A recorded body's form: what a replay compares and answers.
    enum Body: Equatable {
        case json(JSON)
        case text(String)
        case bytes([UInt8])

        init(_ bytes: [UInt8]) {
            if let json = try? JSON.parse(bytes) {
                self = .json(json)
            } else if let text = String(validating: bytes, as: UTF8.self) {
                self = .text(text)
            } else {
                self = .bytes(bytes)
            }
        }

        var bytes: [UInt8] {
            switch self {
            case .json(let json): json.serialized()
            case .text(let text): Array(text.utf8)
            case .bytes(let bytes): bytes
            }
        }
    }

    // MARK: Writing

    func json(secrets: HTTPSecrets, placeholder: (String, String) -> String) -> JSON {
        var object: JSONObject = [
            "method": .string(method), "path": .string(Self.maskingQuery(path, secrets: secrets, placeholder: placeholder)),
            "headers": Self.headersJSON(headers, secrets: secrets, placeholder: placeholder),
        ]
        if let body { Self.append(body, to: &object, secrets: secrets, placeholder: placeholder) }
        object.append("ms", .int(Int64(milliseconds)))
        switch outcome {
        case .response(let response):
            var members: JSONObject = [
                "status": .int(Int64(response.status)),
                "headers": Self.headersJSON(response.headers.fields.map { ($0.name, $0.value) }, secrets: secrets, placeholder: placeholder),
            ]
            if !response.body.isEmpty {
                Self.append(response.body, to: &members, secrets: secrets, placeholder: placeholder, inResponse: true)
            }
            object.append("response", .object(members))
        case .error(let error):
            var members: JSONObject = ["kind": .string(Self.kindName(error.kind)), "detail": .string(error.detail)]
            if case .status(let status) = error.kind { members.append("status", .int(Int64(status))) }
            object.append("error", .object(members))
        case .cancelled:
            object.append("cancelled", true)
        }
        return .object(object)
    }

    private static func headersJSON(_ fields: [(String, String)], secrets: HTTPSecrets, placeholder: (String, String) -> String) -> JSON {
        .array(fields.map { name, value in
            let masked = secrets.isSecretHeader(name) && !value.isEmpty ? placeholder(value, name) : value
            return [.string(name), .string(masked)]
        })
    }

    private static func append(
        _ bytes: [UInt8], to object: inout JSONObject, secrets: HTTPSecrets, placeholder: (String, String) -> String,
        inResponse: Bool = false
    ) {
        switch Body(bytes) {
        case .json(let json): object.append("body", masking(json, secrets: secrets, inResponse: inResponse, placeholder: placeholder))
        case .text(let text): object.append("text", .string(text))
        case .bytes(let bytes): object.append("base64", .string(Base64.encode(bytes)))
        }
    }

    /// `value` with the string values of secret members at any depth replaced by placeholders;
    /// so every string inside such a member's array or object.
    static func masking(
        _ value: JSON, member: String? = nil, secrets: HTTPSecrets, inResponse: Bool = false, placeholder: (String, String) -> String
    ) -> JSON {
        func secret(_ name: String) -> Bool { secrets.isSecretMember(name, inResponse: inResponse) }
        switch value {
        case .string(let text):
            if let member, secret(member), !text.isEmpty { return .string(placeholder(text, member)) }
            return value
        case .array(let elements):
            return .array(elements.map { masking($0, member: member, secrets: secrets, inResponse: inResponse, placeholder: placeholder) })
        case .object(let object):
            var result = JSONObject()
            let inside = member.map(secret) ?? false
            for item in object {
                result.append(
                    item.key,
                    masking(item.value, member: inside ? member : item.key, secrets: secrets, inResponse: inResponse, placeholder: placeholder))
            }
            return .object(result)
        default:
            return value
        }
    }

    /// `path` with the values of secret query parameters replaced by placeholders.
    static func maskingQuery(_ path: String, secrets: HTTPSecrets, placeholder: (String, String) -> String) -> String {
        guard let mark = path.firstIndex(of: "?") else { return path }
        let items = path[path.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
            guard let equals = item.firstIndex(of: "=") else { return String(item) }
            let name = PercentDecoding.decode(item[..<equals])
            let value = PercentDecoding.decode(item[item.index(after: equals)...])
            guard secrets.isSecretMember(name), !value.isEmpty else { return String(item) }
            return item[..<equals] + "=" + URLComponentEncoding.encode(placeholder(value, name))
        }
        return path[..<mark] + "?" + items.joined(separator: "&")
    }

    // MARK: Reading

    /// The error kinds by name.
    static let kinds: [(String, HTTPError.Kind)] = [
        ("hostNotFound", .hostNotFound), ("cannotConnect", .cannotConnect), ("connectionLost", .connectionLost),
        ("secureConnectionFailed", .secureConnectionFailed), ("timedOut", .timedOut), ("responseTooLarge", .responseTooLarge),
        ("undecodable", .undecodable), ("invalidRequest", .invalidRequest), ("unavailable", .unavailable),
        ("notRecorded", .notRecorded), ("failed", .failed),
    ]

    static func kindName(_ kind: HTTPError.Kind) -> String {
        if case .status = kind { return "status" }
        return kinds.first { $0.1 == kind }?.0 ?? "failed"
    }

    /// The recorded request's body, as recorded (masked values are `$secret:` texts).
    var recordedBody: Body?

    /// Reads a line's value; the error says which member is wrong.
    init(json: JSON) throws(HTTPReplayError) {
        guard case .object(let object) = json else { throw .init("expected an object, got \(json.typeName)") }
        let known: Set<String> = ["method", "path", "headers", "body", "text", "base64", "ms", "response", "error", "cancelled"]
        if let unknown = object.keys.first(where: { !known.contains($0) }) {
            throw .init("unknown member \"\(unknown)\" (members: \(known.sorted().joined(separator: ", ")))")
        }
        guard let method = object["method"]?.stringValue, !method.isEmpty else { throw .init("method: expected a string") }
        guard let path = object["path"]?.stringValue, path.hasPrefix("/") else {
            throw .init("path: expected a string starting with /")
        }
        guard let ms = object["ms"]?.intValue, ms >= 0, ms <= Int64(Self.maxMilliseconds) else {
            throw .init("ms: expected an integer from 0 to \(Self.maxMilliseconds)")
        }
        let headers = try Self.readHeaders(object["headers"] ?? .array([]), at: "headers")
        let body = try Self.readBody(object, at: "")
        let outcomes = ["response", "error", "cancelled"].filter { object[$0] != nil }
        guard outcomes.count == 1 else {
            throw .init("expected exactly one of response, error and cancelled, got \(outcomes.isEmpty ? "none" : outcomes.joined(separator: ", "))")
        }
        let outcome: Outcome
        if case .object(let response)? = object["response"] {
            guard let status = response["status"]?.intValue, (100...599).contains(status) else {
                throw .init("response.status: expected an integer from 100 to 599")
            }
            var fields = HTTPHeaders()
            for (name, value) in try Self.readHeaders(response["headers"] ?? .array([]), at: "response.headers") { fields.add(name, value) }
            outcome = .response(HTTPResponse(status: Int(status), headers: fields, body: try Self.readBody(response, at: "response.")?.bytes ?? []))
        } else if object["response"] != nil {
            throw .init("response: expected an object")
        } else if case .object(let error)? = object["error"] {
            guard let name = error["kind"]?.stringValue else { throw .init("error.kind: expected a string") }
            let kind: HTTPError.Kind
            if name == "status", let status = error["status"]?.intValue, (100...599).contains(status) {
                kind = .status(Int(status))
            } else if let known = Self.kinds.first(where: { $0.0 == name }) {
                kind = known.1
            } else {
                throw .init("error.kind: expected one of \(Self.kinds.map(\.0).joined(separator: ", ")), status")
            }
            outcome = .error(HTTPError(kind, error["detail"]?.stringValue ?? "the request failed"))
        } else if object["error"] != nil {
            throw .init("error: expected an object")
        } else {
            guard object["cancelled"] == .bool(true) else { throw .init("cancelled: expected true") }
            outcome = .cancelled
        }
        self.init(method: method, path: path, headers: headers, body: body?.bytes, milliseconds: Int(ms), outcome: outcome)
        recordedBody = body
    }

    init(method: String, path: String, headers: [(String, String)], body: [UInt8]?, milliseconds: Int, outcome: Outcome) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.milliseconds = milliseconds
        self.outcome = outcome
        recordedBody = body.map(Body.init)
    }

    private static func readHeaders(_ json: JSON, at where: String) throws(HTTPReplayError) -> [(String, String)] {
        guard case .array(let items) = json else { throw .init("\(`where`): expected an array of [name, value]") }
        var fields: [(String, String)] = []
        for item in items {
            guard case .array(let pair) = item, pair.count == 2, let name = pair[0].stringValue, let value = pair[1].stringValue else {
                throw .init("\(`where`): expected an array of [name, value]")
            }
            fields.append((name, value))
        }
        return fields
    }

    private static func readBody(_ object: JSONObject, at where: String) throws(HTTPReplayError) -> Body? {
        let forms = ["body", "text", "base64"].filter { object[$0] != nil }
        guard forms.count <= 1 else { throw .init("\(`where`)body: expected one of body, text and base64, got \(forms.joined(separator: ", "))") }
        if let json = object["body"] { return .json(json) }
        if let text = object["text"] {
            guard let text = text.stringValue else { throw .init("\(`where`)text: expected a string") }
            return .text(text)
        }
        if let base64 = object["base64"] {
            guard let text = base64.stringValue, let bytes = Base64.decode(text) else { throw .init("\(`where`)base64: expected base64") }
            return .bytes(bytes)
        }
        return nil
    }
}

/// A recording that cannot be replayed (`--http-replay`): the file, the line and what is wrong.
public struct HTTPReplayError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Percent-decoding of a URL component (`+` is a space in a query).
enum PercentDecoding {
    static func decode(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2, let high = hex(utf8[utf8.startIndex]), let low = hex(utf8[utf8.startIndex + 1]) {
                bytes.append(high << 4 | low)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? 0x20 : byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Base64 (RFC 4648, with padding) for the bodies that are not text.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let a = UInt32(bytes[index])
            let b = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
            let c = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
            let n = a << 16 | b << 8 | c
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(index + 1 < bytes.count ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? alphabet[Int(n & 63)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        var index = 0
        while index < input.count {
            var n: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let byte = input[index + offset]
                if byte == UInt8(ascii: "="), index + 4 == input.count, offset >= 2 {
                    padding += 1
                    n <<= 6
                    continue
                }
                guard padding == 0, let value = alphabet.firstIndex(of: byte) else { return nil }
                n = n << 6 | UInt32(value)
            }
            out.append(UInt8(n >> 16 & 0xFF))
            if padding < 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if padding < 1 { out.append(UInt8(n & 0xFF)) }
            index += 4
        }
        return out
    }
}
