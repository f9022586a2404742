import VMHostWire

// The one way a method handler reads its params: `call.params(allowing:)`, then `value` and
// `optionalValue` of the reader it returns, each failing with the -32602 that names the param.

extension Call {
    /// The params by the one rule of every method (SPEC §3), for the host's methods and an app's
    /// test controls alike: absent (read as `{}`), or an object whose members are all in `members`.
    /// Positional params (an array) and any other member are -32602 naming them. (`exit` and
    /// `$/cancelRequest` never fail: the failure of a notification would go unseen.)
    package func params(allowing members: Set<String>) throws(RPCError) -> JSONReader {
        try invalidParams { () throws(JSONDecodingError) in
            let reader = try JSONReader(params, path: "params")
            try reader.rejectUnknown(members)
            return reader
        }
    }
}

extension JSONReader {
    /// A required member (`null` counts as missing), or -32602 naming it.
    package func value<T: JSONDecodable>(_ key: String, as type: T.Type = T.self) throws(RPCError) -> T {
        try invalidParams { () throws(JSONDecodingError) in try required(key, as: type) }
    }

    /// An optional member (nil when missing or `null`), or -32602 naming it when it does not read.
    package func optionalValue<T: JSONDecodable>(_ key: String, as type: T.Type = T.self) throws(RPCError) -> T? {
        try invalidParams { () throws(JSONDecodingError) in try optional(key, as: type) }
    }
}

/// Runs a step that reads params, its decoding failure answered -32602 (``RPCError/init(_:)``).
package func invalidParams<T>(_ body: () throws(JSONDecodingError) -> T) throws(RPCError) -> T {
    do throws(JSONDecodingError) { return try body() } catch { throw RPCError(error) }
}
