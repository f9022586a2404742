import Foundation

/// The same messages as Codable types, the way a host built on `JSONDecoder`/`JSONEncoder` would
/// declare them: typed envelopes and params, and a dynamic value where the content depends on the
/// view-model (the values of `vm.subscribe` and `vm.changed`).
enum CodableMessages {
    struct Request: Codable {
        struct Params: Codable {
            var vm: String
            var input: String
            var value: String
        }
        var jsonrpc: String
        var id: Int
        var method: String
        var params: Params
    }

    struct Response: Codable {
        struct Result: Codable {
            var subscription: String
            var values: [String: AnyValue]
        }
        var jsonrpc: String
        var id: Int
        var result: Result
    }

    struct Changed: Codable {
        struct Params: Codable {
            var subscription: String
            var vm: String
            var values: [String: AnyValue]
        }
        var jsonrpc: String
        var method: String
        var params: Params
    }

    struct PageChanged: Codable {
        struct Cell: Codable {
            var id, name, bank, profit, saleStatus, term, amount: String
        }
        struct Values: Codable {
            var items: [Cell]
            var page: Int
            var isLoadingMore: Bool
        }
        struct Params: Codable {
            var subscription: String
            var vm: String
            var values: Values
        }
        var jsonrpc: String
        var method: String
        var params: Params
    }

    /// Any JSON value, for the parts whose shape the envelope does not fix.
    enum AnyValue: Codable {
        case null
        case bool(Bool)
        case int(Int64)
        case double(Double)
        case string(String)
        case array([AnyValue])
        case object([String: AnyValue])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .int(value)
            } else if let value = try? container.decode(Double.self) {
                self = .double(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([AnyValue].self) {
                self = .array(value)
            } else {
                self = .object(try container.decode([String: AnyValue].self))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .bool(let value): try container.encode(value)
            case .int(let value): try container.encode(value)
            case .double(let value): try container.encode(value)
            case .string(let value): try container.encode(value)
            case .array(let value): try container.encode(value)
            case .object(let value): try container.encode(value)
            }
        }
    }

    /// Decoding and encoding of one message type, chosen once per sample (outside the timing).
    struct Codec {
        var decode: (JSONDecoder, Data) throws -> any Encodable
        var encode: (JSONEncoder, any Encodable) throws -> Data
    }

    static func codec<T: Codable>(_ type: T.Type) -> Codec {
        Codec(
            decode: { decoder, data in try decoder.decode(T.self, from: data) },
            encode: { encoder, value in try encoder.encode(value as! T) })
    }

    /// The Codable type of the sample called `name`.
    static func codec(for name: String) -> Codec {
        switch name {
        case Messages.request.name: codec(Request.self)
        case Messages.response.name: codec(Response.self)
        case Messages.changed.name: codec(Changed.self)
        default: codec(PageChanged.self)
        }
    }
}
