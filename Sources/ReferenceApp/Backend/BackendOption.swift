import VMHostEventLoop
import Foundation
import VMHostRuntime

/// The `--backend` option: `embedded` (the default) or the base URL of an HTTP server.
public enum BackendOption: Sendable, Hashable, CustomStringConvertible {
    case embedded
    case http(URL)

    /// Parses `embedded`, or an absolute `http://` / `https://` URL with a host.
    public init(parsing text: String) throws(BackendOptionError) {
        if text == "embedded" {
            self = .embedded
            return
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else {
            throw BackendOptionError(message: "--backend: expected \"embedded\" or an http:// or https:// URL, got \"\(text)\"")
        }
        self = .http(url)
    }

    /// Makes the client; the host keeps an ``EmbeddedBackend`` to serve `control.backend.*`.
    /// `demoProductCount` is the embedded backend's catalogue size (an HTTP backend ignores it).
    @HostActor
    public func makeClient(
        clock: any HostClock, timeout: Duration, demoProductCount: Int = DemoCatalog.productCount
    ) -> any APIClient {
        switch self {
        case .embedded: EmbeddedBackend(clock: clock, timeout: timeout, productCount: demoProductCount)
        case .http(let url): HTTPAPIClient(baseURL: url, clock: clock, timeout: timeout)
        }
    }

    public var description: String {
        switch self {
        case .embedded: "embedded"
        case .http(let url): url.absoluteString
        }
    }
}

/// A `--backend` value that is neither `embedded` nor an HTTP URL.
public struct BackendOptionError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
