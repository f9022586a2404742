import VMHost

/// The body of every response: `{"success", "code", "message", "data", "page"}`, or the
/// `{"code", "msg", "data", "page"}` convention without `success` (see ``init(json:)``).
///
/// `code` is a string (`"0"` on success); `page` is present on paged endpoints only. Parsing an
/// envelope checks its shape only; whether it reports a failure is ``ErrorMapping``'s decision.
public struct Envelope: Sendable, Hashable {
    public var success: Bool
    public var code: String
    public var message: String
    public var data: JSON
    public var page: PageInfo?

    public init(success: Bool, code: String, message: String, data: JSON = .null, page: PageInfo? = nil) {
        self.success = success
        self.code = code
        self.message = message
        self.data = data
        self.page = page
    }

    /// A success envelope around `data`.
    public static func ok(_ data: JSON = .null, page: PageInfo? = nil) -> Envelope {
        Envelope(success: true, code: "0", message: "ok", data: data, page: page)
    }

    /// A failure envelope.
    public static func failure(code: String, message: String) -> Envelope {
        Envelope(success: false, code: code, message: message)
    }

    /// Decodes an envelope in either convention (`protocol/backend.md`, "The envelope"):
    ///
    /// - `success` present: it decides; `code` may be a string or an integer (read as its decimal
    ///   text; a number with a fraction or an exponent is refused), `message` is the message.
    /// - `success` absent: `code` is required and decides (`"0"` or `0` is success), `msg` is the
    ///   message (`{"code": "1", "msg": "失败"}`); a `message` member is read when `msg` is absent.
    ///
    /// A missing message is empty, a missing `data` null; a `page` that is present must be well formed.
    public init(json: JSON) throws(BackendError) {
        let fields = try JSONFields(json, context: "envelope")
        let object = fields.object
        let code: String?
        switch object["code"] {
        case .string(let string): code = string
        case .int(let number): code = String(number)
        case nil, .null: code = nil
        case .double:
            // A code is an identifier: `1e3`, `0.0` and `1001.5` are no integers (protocol/backend.md).
            throw .decode("envelope.code: expected a string or an integer, got a number with a fraction or an exponent")
        case let other?: throw .decode("envelope.code: expected a string or an integer, got \(other.typeName)")
        }
        let messageKey: String
        if object["success"] != nil {
            success = try fields.bool("success")
            self.code = code ?? (success ? "0" : "")
            messageKey = "message"
        } else {
            guard let code else { throw .decode("envelope: neither success nor code is present") }
            success = code == "0"
            self.code = code
            messageKey = object["msg"] != nil ? "msg" : "message"
        }
        switch object[messageKey] {
        case .string(let string): message = string
        case nil, .null: message = ""
        case let other?: throw .decode("envelope.\(messageKey): expected a string, got \(other.typeName)")
        }
        data = object["data"] ?? .null
        switch object["page"] {
        case nil, .null: page = nil
        case let value?: page = try PageInfo(json: value)
        }
    }

    public var json: JSON { json(in: .successFlag) }

    /// The envelope written in `convention`.
    public func json(in convention: EnvelopeConvention) -> JSON {
        var object: JSONObject
        switch convention {
        case .successFlag:
            object = ["success": .bool(success), "code": .string(code), "message": .string(message), "data": data]
        case .codeAndMsg:
            // Without `success`, the code alone says success: a success is always written "0".
            object = ["code": .string(success ? "0" : code), "msg": .string(message), "data": data]
        }
        if let page { object.append("page", page.json) }
        return .object(object)
    }
}

/// The two ways a server writes its envelope; ``Envelope/init(json:)`` reads both.
public enum EnvelopeConvention: String, Sendable, Hashable, CaseIterable {
    /// `{"success": true, "code": "0", "message": "ok", "data": …}`: `success` decides.
    case successFlag
    /// `{"code": "0", "msg": "成功", "data": …}`: `code` `"0"` is success, `msg` the message.
    case codeAndMsg
}

/// The results of the endpoints, read from `data` (public for the backend fuzz target, which runs
/// bodies through them as the clients do).
extension Envelope {
    /// `data` as one page of products, with the envelope's page info.
    public func productPage() throws(BackendError) -> Page<Product> {
        guard let page else { throw .decode("envelope.page is missing") }
        return Page(items: try .decoding(data, context: "data", Product.init(json:)), info: page)
    }

    public func session() throws(BackendError) -> Session { try Session(json: data) }

    public func groups() throws(BackendError) -> [MenuGroup] { try .decoding(data, context: "data", MenuGroup.init(json:)) }

    public func group() throws(BackendError) -> MenuGroup { try MenuGroup(json: data) }
}
