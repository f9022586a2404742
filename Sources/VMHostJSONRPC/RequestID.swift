import VMHostWire

/// A request's `id`: a string, a number or null, echoed back exactly as received.
public struct RequestID: Hashable, Sendable, CustomStringConvertible {
    public let json: JSON

    /// Nil for a value JSON-RPC does not allow as an id (boolean, array, object).
    public init?(_ json: JSON) {
        switch json {
        case .string, .int, .double, .null: self.json = json
        default: return nil
        }
    }

    public static func number(_ n: Int64) -> RequestID { RequestID(.int(n))! }
    public static func string(_ s: String) -> RequestID { RequestID(.string(s))! }

    public var description: String { json.description }
}
