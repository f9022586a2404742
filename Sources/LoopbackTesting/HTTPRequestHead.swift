import Foundation

/// The request line and headers of an HTTP/1.1 request, parsed from the bytes before the blank line.
package struct HTTPRequestHead {
    package var method: String
    package var path: String
    package var query: [String: String]
    package var headers: [String: String]

    /// The body length announced by `Content-Length` (0 when absent).
    package var contentLength: Int { headers["content-length"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0 }

    /// Where the head ends (the index just past `\r\n\r\n`), or nil when it has not all arrived.
    package static func end(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    /// Parses the head; nil when the request line is not `METHOD target HTTP/1.x`.
    package init?(_ bytes: ArraySlice<UInt8>) {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else { return nil }
        method = String(requestLine[0])
        let target = requestLine[1]
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = Self.decodeQuery(target[target.index(after: mark)...])
        } else {
            path = String(target)
            query = [:]
        }
        headers = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
    }

    private static func decodeQuery(_ query: Substring) -> [String: String] {
        var result: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (raw: Substring) in
                raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(raw)
            }
            result[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return result
    }
}
