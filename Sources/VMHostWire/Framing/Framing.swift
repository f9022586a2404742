/// How messages are delimited on a byte stream.
@_spi(Transport)
public enum Framing: String, Sendable, CaseIterable {
    /// Decide from the first line, after a UTF-8 byte order mark and whitespace: a header line
    /// (`Name: value`) → ``lsp``; anything else → ``ndjson``.
    case auto
    /// One JSON text per line; `\r\n` is tolerated; blank lines are ignored.
    case ndjson
    /// `Content-Length: N\r\n\r\n` then N bytes; other headers are ignored; names are case-insensitive.
    case lsp
}

extension Framing {
    /// Appends `body` to `out` framed this way. ``auto`` writes as ``ndjson``.
    package func frame(_ body: [UInt8], into out: inout [UInt8]) {
        switch self {
        case .lsp:
            out.append(contentsOf: "Content-Length: \(body.count)\r\n\r\n".utf8)
            out.append(contentsOf: body)
        case .ndjson, .auto:
            out.append(contentsOf: body)
            out.append(UInt8(ascii: "\n"))
        }
    }
}
