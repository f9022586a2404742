/// The `--backend` option: `embedded` (the default) or the base URL of an HTTP server.
public enum BackendOption: Sendable, Hashable, CustomStringConvertible {
    case embedded
    case http(BackendURL)

    /// Parses `embedded`, or an absolute `http://` / `https://` URL with a host.
    public init(parsing text: String) throws(BackendOptionError) {
        if text == "embedded" {
            self = .embedded
            return
        }
        guard let url = BackendURL(text) else {
            throw BackendOptionError(message: "--backend: expected \"embedded\" or an http:// or https:// URL, got \"\(text)\"")
        }
        self = .http(url)
    }

    public var description: String {
        switch self {
        case .embedded: "embedded"
        case .http(let url): url.description
        }
    }
}

/// A `--backend` value that is neither `embedded` nor an HTTP URL.
public struct BackendOptionError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
