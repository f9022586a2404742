import VMHostWire

/// Values made from the JSON Schemas that `host.describe` reports (the subset the runtime writes:
/// `type`, `enum`, `const`, `anyOf`, `properties`, `required`, `additionalProperties`, `items`,
/// `minItems`, `minLength`, `maxLength`, `minimum`, `maximum`, `default`).
package enum JSONSchemaExample {
    /// A small value `schema` accepts: required members only, each at its lower bound, the first
    /// `enum` case or `anyOf` branch. What an ``ObjectReader`` answers for a required member while
    /// it records, and what the test kit starts from to check that a kind accepts what it describes.
    package static func minimal(_ schema: JSON) -> JSON {
        guard case .object(let object) = schema else { return .null }
        if let constant = object["const"] { return constant }
        if let cases = object["enum"]?.arrayValue, let first = cases.first { return first }
        if let branches = object["anyOf"]?.arrayValue ?? object["oneOf"]?.arrayValue, let first = branches.first {
            return minimal(first)
        }
        switch object["type"]?.stringValue {
        case "null": return .null
        case "boolean": return .bool(false)
        case "integer":
            let low = object["minimum"]?.intValue ?? 0
            let high = object["maximum"]?.intValue ?? .max
            return .int(min(max(low, 0), high))
        case "number":
            let low = object["minimum"]?.doubleValue ?? 0
            let high = object["maximum"]?.doubleValue ?? .greatestFiniteMagnitude
            return .double(min(max(low, 0), high))
        case "string":
            let length = Int(object["minLength"]?.intValue ?? 0)
            return .string(String(repeating: "a", count: min(max(length, 0), 1024)))
        case "array":
            let count = Int(object["minItems"]?.intValue ?? 0)
            let item = minimal(object["items"] ?? [:])
            return .array(Array(repeating: item, count: min(max(count, 0), 64)))
        case "object":
            let properties = object["properties"]?.objectValue ?? [:]
            var result = JSONObject()
            for name in object["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
                result.append(name, minimal(properties[name] ?? [:]))
            }
            return .object(result)
        default:
            return .null
        }
    }
}
