import VMHostRuntime
import VMHostWire

/// The body of every response: `{"success", "code", "message", "data", "page"}`.
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

    /// Decodes an envelope. `success` is required; `code` may be a string or a number; a missing
    /// `message` is empty, a missing `data` null; a `page` that is present must be well formed.
    public init(json: JSON) throws(DomainError) {
        let fields = try JSONFields(json, context: "envelope")
        success = try fields.bool("success")
        switch fields.object["code"] {
        case .string(let string): code = string
        case .int(let number): code = String(number)
        case nil, .null: code = success ? "0" : ""
        case let other?: throw .decode("envelope.code: expected a string, got \(other.typeName)")
        }
        switch fields.object["message"] {
        case .string(let string): message = string
        case nil, .null: message = ""
        case let other?: throw .decode("envelope.message: expected a string, got \(other.typeName)")
        }
        data = fields.object["data"] ?? .null
        switch fields.object["page"] {
        case nil, .null: page = nil
        case let value?: page = try PageInfo(json: value)
        }
    }

    public var json: JSON {
        var object: JSONObject = [
            "success": .bool(success), "code": .string(code), "message": .string(message), "data": data,
        ]
        if let page { object.append("page", page.json) }
        return .object(object)
    }
}

/// The results of the endpoints, read from `data` (public for the backend fuzz target, which runs
/// bodies through them as the clients do).
extension Envelope {
    /// `data` as one page of products, with the envelope's page info.
    public func productPage() throws(DomainError) -> Page<Product> {
        guard let page else { throw .decode("envelope.page is missing") }
        return Page(items: try .decoding(data, context: "data", Product.init(json:)), info: page)
    }

    public func session() throws(DomainError) -> Session { try Session(json: data) }

    public func groups() throws(DomainError) -> [MenuGroup] { try .decoding(data, context: "data", MenuGroup.init(json:)) }

    public func group() throws(DomainError) -> MenuGroup { try MenuGroup(json: data) }
}
