#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostHTTP
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// What an app chooses about its server. Everything else (stdio, framing, signals, trace, logs, the
/// standard options) is the server's.
public struct ServerConfiguration: Sendable {
    /// The server's name: `serverInfo.name` in `initialize`, the command in `--help` and the prefix
    /// of log lines.
    public var name: String
    /// The app's version: `serverInfo.version` and `--version`.
    public var version: String
    /// One sentence for `--help`: what the server is.
    public var overview: String
    /// A paragraph or two for `--help`, after the overview.
    public var discussion: String
    /// The app's own command-line options, listed by `--help` after the standard ones; their values
    /// reach ``kinds`` as ``ServerEnvironment/arguments``.
    public var options: [OptionSpec]
    /// The locale of display strings until a client's `initialize {locale}` chooses another
    /// (English unless the app says otherwise).
    public var defaultLocale: AppLocale
    /// The locales `initialize {locale}` accepts (the rule: ``AppLocale/match(_:in:)``); another
    /// is -32602.
    public var locales: [AppLocale]
    /// The kinds of domain error the app's commands fail with (``DomainFailure``): the `kind`
    /// enumeration of every error schema in `host.describe`. Nil: any string.
    public var errorKinds: [String]?
    /// Names of members whose string values are secret wherever they appear (a `token` in a
    /// message), masked in the trace like the values of inputs declared secret. The names of the
    /// secret inputs themselves need not be listed.
    public var secretMembers: Set<String>
    /// Names of header fields whose values are secret in a recording of the app's HTTP exchanges
    /// (`--record`), besides the JSON members of ``secretMembers`` and the credential-like ones
    /// (``HTTPSecrets``). By default `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`.
    public var secretHeaders: Set<String> = HTTPSecrets.defaultHeaders
    /// Makes the app's kinds and test controls once the server has read its command line (on the
    /// host thread, before the first message). A usage error (an app option's bad value) is
    /// written with the usage, and the process exits 64.
    public var kinds: @HostActor @Sendable (ServerEnvironment) throws(UsageError) -> ServedApp

    /// A configuration; `overview` and `discussion` default to a description of a vmhost server.
    public init(
        name: String, version: String,
        overview: String? = nil, discussion: String? = nil,
        options: [OptionSpec] = [],
        defaultLocale: AppLocale = .en, locales: [AppLocale]? = nil,
        errorKinds: [String]? = nil,
        secretMembers: Set<String> = [],
        secretHeaders: Set<String> = HTTPSecrets.defaultHeaders,
        kinds: @escaping @HostActor @Sendable (ServerEnvironment) throws(UsageError) -> ServedApp
    ) {
        self.name = name
        self.version = version
        self.overview = overview ?? "Holds \(name)'s view-models and serves them over JSON-RPC 2.0 on stdin/stdout."
        self.discussion = discussion ?? """
            Requests are read from stdin, responses and notifications are written to stdout, logs go
            to stderr. Start it, send {"jsonrpc":"2.0","id":1,"method":"host.describe"} and read the
            catalog of view-model kinds.
            """
        self.options = options
        self.defaultLocale = defaultLocale
        self.locales = locales ?? [defaultLocale]
        self.errorKinds = errorKinds
        self.secretMembers = secretMembers
        self.secretHeaders = secretHeaders
        self.kinds = kinds
    }
}
