import VMHostWire

/// A request's `id`: a string, a number or null, echoed back exactly as received.
package struct RequestID: Hashable, Sendable, CustomStringConvertible {
    /// The id as received.
    package let json: JSON

    /// Nil for a value JSON-RPC does not allow as an id (boolean, array, object).
    package init?(_ json: JSON) {
        switch json {
        case .string, .int, .double, .null: self.json = json
        default: return nil
        }
    }

    /// A number id.
    package static func number(_ n: Int64) -> RequestID { RequestID(.int(n))! }
    /// A string id.
    package static func string(_ s: String) -> RequestID { RequestID(.string(s))! }

    /// What `$/cancelRequest` matches on (SPEC §6): a number by its value (`1000`, `1000.0` and
    /// `1e3` are one id), a string by its exact text; a string never matches a number (`"1000"` is
    /// another id than `1000`).
    package var cancellationKey: JSON {
        if case .double(let value) = json, let integer = Int64(exactly: value) { return .int(integer) }
        return json
    }

    /// The id as JSON text.
    package var description: String { json.description }
}
