import VMHostRuntime
import VMHostWire

/// One call of the backend as a recording keeps it (protocol/backend.md, "Recorded backend"):
/// the request (method, path with its query, body) and what the exchange layer returned: a
/// success envelope, a ``BackendError``, or nothing because the call was cancelled; and how long it
/// took on the host's clock.
///
/// On a recording's line `{"backend": …}`:
///
/// ```json
/// {"method":"GET","path":"/products?page=1&pageSize=20","ms":0,"response":{"success":true,"code":"0","message":"ok","data":[…],"page":{…}}}
/// {"method":"POST","path":"/auth/login","body":{"username":"13800138000","password":"$secret:password:6"},"ms":0,"error":{"kind":"business","code":"1001","detail":"…","message":"用户名或密码错误"}}
/// {"method":"GET","path":"/menus/m1/groups","ms":5000,"cancelled":true}
/// ```
///
/// Secrets (the string values of credential-like members, ``isCredential(_:)``: a password or a
/// code in a request body, a token in a response's `data`) are written as `"$secret:…"`
/// placeholders by the recording, never in clear.
public struct RecordedExchange: Sendable, Hashable {
    public enum Outcome: Sendable, Hashable {
        /// A success envelope.
        case response(Envelope)
        /// The failure the call threw (transport, status, envelope verdict, decoding).
        case error(BackendError)
        /// The call was cancelled before it ended.
        case cancelled
    }

    public var method: String
    /// The path and its query, percent-encoded, as the HTTP request line has them.
    public var path: String
    /// The JSON body of `POST` and `PUT`.
    public var body: JSON?
    /// How long the call took on the host's clock, in whole milliseconds.
    public var milliseconds: Int
    public var outcome: Outcome

    /// What a credential-like member's name holds (compared without regard to case, `_` and `-`
    /// left out): its string values are secrets in a request body and in a response's `data`, at
    /// any depth (`password`, `refreshToken`, `session.access_token`, `smsCode`, `clientSecret`).
    /// A backend answer holds what the app reads and more; masking by name keeps what a server
    /// adds, under any name of this kind, out of a recording too.
    public static let credentialWords = ["password", "passwd", "secret", "token", "credential", "code", "cookie", "apikey"]

    /// Whether the member `name` is credential-like (``credentialWords``).
    public static func isCredential(_ name: String) -> Bool {
        let folded = String(name.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" })
        return credentialWords.contains { folded.contains($0) }
    }
    /// The longest wait a line may ask for: a day, as `delay:` allows.
    public static let maxMilliseconds = 86_400_000

    public init(method: String, path: String, body: JSON?, milliseconds: Int, outcome: Outcome) {
        self.method = method
        self.path = path
        self.body = body
        self.milliseconds = milliseconds
        self.outcome = outcome
    }

    /// The method and the path with its query, as an HTTP request line names them.
    package static func target(of request: APIRequest) -> (method: String, path: String) {
        var path = request.path
        for (index, item) in request.query.enumerated() {
            path += index == 0 ? "?" : "&"
            path += PercentEncoding.encode(item.name, as: .queryComponent) + "="
                + PercentEncoding.encode(item.value, as: .queryComponent)
        }
        return (request.method.rawValue, path)
    }

    /// The line's value, with every secret string replaced by `secret(value, memberName)`.
    public func json(secret: (String, String) -> String) -> JSON {
        var object: JSONObject = ["method": .string(method), "path": .string(path)]
        if let body { object.append("body", Self.masking(body, secret: secret)) }
        object.append("ms", .int(Int64(milliseconds)))
        switch outcome {
        case .response(let envelope):
            var json = envelope.json
            if case .object(var members) = json {
                members["data"] = Self.masking(envelope.data, secret: secret)
                json = .object(members)
            }
            object.append("response", json)
        case .error(let error):
            var members: JSONObject = ["kind": .string(error.kind.rawValue), "code": error.code, "detail": .string(error.detail)]
            if let message = error.serverMessage { members.append("message", .string(message)) }
            object.append("error", .object(members))
        case .cancelled:
            object.append("cancelled", true)
        }
        return .object(object)
    }

    /// `value` with the string values of credential-like members (``isCredential(_:)``) at any
    /// depth replaced by `secret`; so every string inside such a member's array or object.
    static func masking(_ value: JSON, member: String? = nil, secret: (String, String) -> String) -> JSON {
        switch value {
        case .string(let text):
            if let member, isCredential(member), !text.isEmpty { return .string(secret(text, member)) }
            return value
        case .array(let elements):
            return .array(elements.map { masking($0, member: member, secret: secret) })
        case .object(let object):
            var result = JSONObject()
            for item in object {
                let credential = member.map(isCredential) ?? false
                result.append(item.key, masking(item.value, member: credential ? member : item.key, secret: secret))
            }
            return .object(result)
        default:
            return value
        }
    }

    /// Reads a line's value; the error says which member is wrong.
    public init(json: JSON) throws(RecordedBackendError) {
        guard case .object(let object) = json else { throw .init("expected an object, got \(json.typeName)") }
        let known: Set<String> = ["method", "path", "body", "ms", "response", "error", "cancelled"]
        if let unknown = object.keys.first(where: { !known.contains($0) }) {
            throw .init("unknown member \"\(unknown)\" (members: \(known.sorted().joined(separator: ", ")))")
        }
        guard let method = object["method"]?.stringValue, HTTPMethod(rawValue: method) != nil else {
            throw .init("method: expected one of \(HTTPMethod.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let path = object["path"]?.stringValue, path.hasPrefix("/") else {
            throw .init("path: expected a string starting with /")
        }
        guard let ms = object["ms"]?.intValue, ms >= 0, ms <= Int64(Self.maxMilliseconds) else {
            throw .init("ms: expected an integer from 0 to \(Self.maxMilliseconds)")
        }
        let outcomes = ["response", "error", "cancelled"].filter { object[$0] != nil }
        guard outcomes.count == 1 else {
            throw .init("expected exactly one of response, error and cancelled, got \(outcomes.isEmpty ? "none" : outcomes.joined(separator: ", "))")
        }
        let outcome: Outcome
        if let response = object["response"] {
            do throws(BackendError) {
                let envelope = try Envelope(json: response)
                guard envelope.success else { throw BackendError.decode("not a success") }
                outcome = .response(envelope)
            } catch {
                throw .init("response: expected a success envelope (\(error.detail))")
            }
        } else if let error = object["error"] {
            outcome = .error(try Self.domainError(error))
        } else {
            guard object["cancelled"] == .bool(true) else { throw .init("cancelled: expected true") }
            outcome = .cancelled
        }
        self.init(method: method, path: path, body: object["body"], milliseconds: Int(ms), outcome: outcome)
    }

    private static func domainError(_ json: JSON) throws(RecordedBackendError) -> BackendError {
        guard case .object(let object) = json else { throw .init("error: expected an object") }
        guard let name = object["kind"]?.stringValue, let kind = BackendError.Kind(rawValue: name) else {
            throw .init("error.kind: expected one of \(BackendError.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let code = object["code"] ?? .null
        switch code {
        case .null, .int, .string: break
        default: throw .init("error.code: expected an integer, a string or null")
        }
        guard let detail = object["detail"]?.stringValue else { throw .init("error.detail: expected a string") }
        var message: String?
        if let value = object["message"] {
            guard let text = value.stringValue else { throw .init("error.message: expected a string") }
            message = text
        }
        return BackendError(kind: kind, code: code, detail: detail, serverMessage: message)
    }
}

/// A recorded backend that cannot be used: the file, the line and what is wrong.
public struct RecordedBackendError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
