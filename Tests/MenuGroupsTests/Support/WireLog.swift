import VMHostTesting
@_spi(Transport) import VMHostWire

/// One message the host wrote, reduced to what a menu-group test asserts, with object members
/// sorted so that expectations do not depend on member order.
enum WireLog: Equatable, CustomStringConvertible {
    case changed(String, JSON)
    case event(String, String, JSON)
    case result(JSON)
    case error(Int64, JSON?)

    init(_ message: JSON) {
        if message["method"] == "vm.changed" {
            self = .changed(message["params"]?["subscription"]?.stringValue ?? "?", message["params"]?["values"] ?? nil)
        } else if message["method"] == "vm.event" {
            let params = message["params"] ?? nil
            self = .event(
                params["subscription"]?.stringValue ?? "?", params["name"]?.stringValue ?? "?", params["value"] ?? nil)
        } else if let error = message["error"] {
            self = .error(error["code"]?.intValue ?? 0, error["data"])
        } else {
            self = .result(message["result"] ?? nil)
        }
    }

    /// Equal when equal with object members sorted: member order on the wire is not asserted.
    static func == (lhs: WireLog, rhs: WireLog) -> Bool {
        switch (lhs, rhs) {
        case let (.changed(s1, v1), .changed(s2, v2)): s1 == s2 && sorted(v1) == sorted(v2)
        case let (.event(s1, n1, v1), .event(s2, n2, v2)): s1 == s2 && n1 == n2 && sorted(v1) == sorted(v2)
        case let (.result(v1), .result(v2)): sorted(v1) == sorted(v2)
        case let (.error(c1, d1), .error(c2, d2)): c1 == c2 && d1.map(sorted) == d2.map(sorted)
        default: false
        }
    }

    static func sorted(_ json: JSON) -> JSON {
        switch json {
        case .object(let object):
            return .object(JSONObject(object.members.sorted { $0.key < $1.key }.map { ($0.key, sorted($0.value)) }))
        case .array(let elements):
            return .array(elements.map(sorted))
        default:
            return json
        }
    }

    var description: String {
        switch self {
        case .changed(let s, let values): "changed \(s) \(values)"
        case .event(let s, let name, let value): "event \(s) \(name) \(value)"
        case .result(let value): "result \(value)"
        case .error(let code, let data): "error \(code) \(data.map(\.description) ?? "")"
        }
    }
}

extension Exchange {
    /// Every message of the exchange, reduced.
    var log: [WireLog] { messages.map(WireLog.init) }
}
