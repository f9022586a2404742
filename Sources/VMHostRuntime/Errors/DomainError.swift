import VMHostWire

/// A failure of the domain as the wire carries it (SPEC §5): what a failed command's `error` event
/// and its -32004 reply hold, `{"kind", "code", "message", "detail", "input"}`.
///
/// The framework knows no kind of failure of its own: the app says its kinds (`network`,
/// `notFound`, …), its codes and its messages, by throwing errors that conform to
/// ``DomainFailure``. The runtime turns such an error into a `DomainError` in the view-model's
/// locale, with the failed input's name, when it reaches a view-model. Cancellation is never a
/// domain error: a cancelled call throws `CancellationError`.
public struct DomainError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The app's name for what went wrong (`network`, `timeout`, `notFound`).
    public var kind: String
    /// A code of the app's (an HTTP status, a server's failure code), or null.
    public var code: JSON
    /// What the user reads, in the view-model's locale.
    public var message: String
    /// What failed, for developers: English, and never a secret or a quote of a response body.
    public var detail: String
    /// The input (command) whose work failed; null for work no input started.
    public var input: String?

    /// A failure of `kind`, telling the user `message` and developers `detail`.
    public init(kind: String, code: JSON = .null, message: String, detail: String, input: String? = nil) {
        self.kind = kind
        self.code = code
        self.message = message
        self.detail = detail
        self.input = input
    }

    /// The error object of the wire.
    public var json: JSON {
        ["kind": .string(kind), "code": code, "message": .string(message), "detail": .string(detail), "input": JSON(input)]
    }

    /// `kind error: detail`.
    public var description: String { "\(kind) error: \(detail)" }

    /// The schema of ``json`` with `kind` one of `kinds` (what an app declares in its configuration).
    package static func jsonSchema(kinds: [String]) -> JSON {
        schema(kind: ["enum": .array(kinds.map { .string($0) })])
    }

    private static func schema(kind: JSON) -> JSON {
        [
            "type": "object",
            "properties": [
                "kind": kind,
                "code": ["type": ["integer", "string", "null"]],
                "message": ["type": "string"],
                "detail": ["type": "string"],
                "input": ["type": ["string", "null"]],
            ],
            "required": ["kind", "code", "message", "detail", "input"],
        ]
    }
}

extension DomainError: JSONEncodable, Codable {
    /// The schema of ``json`` with any `kind`; a host narrows it to the kinds its app declares.
    public static var jsonSchema: JSON { schema(kind: ["type": "string"]) }

    /// Writes ``json``.
    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }

    /// Reads an error object of the wire (a client's, or a recording's).
    public init(from decoder: any Decoder) throws {
        let value = try JSON(from: decoder)
        kind = value["kind"]?.stringValue ?? ""
        code = value["code"] ?? .null
        message = value["message"]?.stringValue ?? ""
        detail = value["detail"]?.stringValue ?? ""
        input = value["input"]?.stringValue
    }
}

/// An error of the app's that fails a command as a domain error (an `error` event and -32004)
/// instead of as a bug (-32603): the app says, for the locale the view-model shows, what failed.
///
/// ```swift
/// enum TodoFailure: DomainFailure {
///     case unavailable, notFound(String)
///     func domainError(in locale: AppLocale) -> DomainError {
///         switch self {
///         case .unavailable: DomainError(kind: "unavailable", code: 503, message: "The list is unavailable.", detail: "HTTP 503")
///         case .notFound(let id): DomainError(kind: "notFound", message: "This todo is gone.", detail: "no todo \(id)")
///         }
///     }
/// }
/// ```
public protocol DomainFailure: Error {
    /// This failure as the user of `locale` reads it. The runtime sets `input`.
    func domainError(in locale: AppLocale) -> DomainError
}

extension DomainError: DomainFailure {
    /// Itself: a `DomainError` thrown as it is keeps its message whatever the locale.
    public func domainError(in locale: AppLocale) -> DomainError { self }
}
