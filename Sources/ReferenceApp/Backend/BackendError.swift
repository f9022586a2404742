import VMHost

/// A failure of the reference app's backend: what its API client throws, and what a command of
/// its view-models fails with (a ``DomainFailure``: on the wire, `{kind, code, message, detail,
/// input}`, SPEC §5).
///
/// - `network`: no connection, connection refused, DNS failure. `code` null.
/// - `timeout`: the request's deadline passed. `code` null.
/// - `server`: HTTP status ≥ 400. `code` is the status as a number.
/// - `business`: the envelope reported a failure. `code` is the envelope's code (a string) and
///   the user's message is the envelope's message (a localized fallback when it is empty).
/// - `decode`: the body could not be parsed or had the wrong shape. `code` null.
/// - `unauthorized`: the server answered HTTP 401 to a call made with the session's token; the
///   session has ended. `code` 401.
///
/// `detail` is for developers, in English, and never quotes a response body. Cancellation is never
/// a `BackendError`: a cancelled call throws `CancellationError`.
public struct BackendError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        case network, timeout, server, business, decode, unauthorized
    }

    public var kind: Kind
    /// The HTTP status (`server`), the envelope's code (`business`), or null.
    public var code: JSON
    /// What failed, for developers: English, never a quote of the response body.
    public var detail: String
    /// The server's own message (`business`), shown to the user as it is unless empty.
    public var serverMessage: String?

    public init(kind: Kind, code: JSON = .null, detail: String, serverMessage: String? = nil) {
        self.kind = kind
        self.code = code
        self.detail = detail
        self.serverMessage = serverMessage
    }

    public static func network(_ detail: String) -> BackendError { .init(kind: .network, detail: detail) }
    public static func timeout(_ detail: String = "the request timed out") -> BackendError { .init(kind: .timeout, detail: detail) }
    public static func server(status: Int, detail: String? = nil) -> BackendError {
        .init(kind: .server, code: .int(Int64(status)), detail: detail ?? "the server answered HTTP \(status)")
    }
    /// A failure the server reported in its envelope, with its code and its (user-facing) message.
    public static func business(code: String, message: String) -> BackendError {
        .init(kind: .business, code: .string(code), detail: "the server reported failure code \"\(code)\"", serverMessage: message)
    }
    public static func decode(_ detail: String) -> BackendError { .init(kind: .decode, detail: detail) }
    /// The session ended because the server refused its token (HTTP 401).
    public static func unauthorized(_ detail: String = "the server refused the session's token (HTTP 401); the session has ended") -> BackendError {
        .init(kind: .unauthorized, code: .int(401), detail: detail)
    }

    /// The text a user reads, in `locale`: one friendly sentence per kind; a business failure
    /// shows the server's message, or a fallback when the server sent none.
    public func message(in locale: AppLocale) -> String {
        switch kind {
        case .network: BackendErrorText.network(locale)
        case .timeout: BackendErrorText.timeout(locale)
        case .server:
            if case .int(let status) = code { BackendErrorText.server(status: Int(status))(locale) } else { BackendErrorText.serverNoStatus(locale) }
        case .decode: BackendErrorText.decode(locale)
        case .unauthorized: BackendErrorText.unauthorized(locale)
        case .business:
            if let serverMessage, !serverMessage.allSatisfy(\.isWhitespace) { serverMessage } else { BackendErrorText.business(locale) }
        }
    }

    public var description: String { "\(kind.rawValue) error: \(detail)" }

    /// The error kinds of the app, as its configuration declares them (`host.describe` lists them).
    public static let kindNames = Kind.allCases.map(\.rawValue)
}

extension BackendError: DomainFailure {
    public func domainError(in locale: AppLocale) -> DomainError {
        DomainError(kind: kind.rawValue, code: code, message: message(in: locale), detail: detail)
    }
}

/// The user-facing texts of ``BackendError/message(in:)``, in every locale of the app.
public enum BackendErrorText {
    public static let network = LocalizedText(zh: "网络连接失败，请检查网络后重试", en: "No connection. Check your network and try again.")
    public static let timeout = LocalizedText(zh: "请求超时，请稍后重试", en: "The request timed out. Please try again.")
    public static func server(status: Int) -> LocalizedText {
        LocalizedText(zh: "服务器错误（\(status)），请稍后重试", en: "Server error (\(status)). Please try again later.")
    }
    static let serverNoStatus = LocalizedText(zh: "服务器错误，请稍后重试", en: "Server error. Please try again later.")
    public static let decode = LocalizedText(zh: "服务器返回的数据无法识别，请稍后重试", en: "The server's answer could not be read. Please try again later.")
    public static let business = LocalizedText(zh: "操作失败，请稍后重试", en: "The request failed. Please try again.")
    public static let unauthorized = LocalizedText(zh: "登录已失效，请重新登录", en: "Your session has ended. Please log in again.")
}
