import VMHostWire

/// A condition a member's value must meet beyond its type, given to an ``ObjectReader`` read: the
/// schema says it, and a read refuses a value that does not meet it, naming the member.
///
/// ```swift
/// pageSize = try reader.optional("pageSize", .in(1...100), default: 20)
/// // {"type":"integer","minimum":1,"maximum":100,"default":20}
/// // params.args.pageSize: must be between 1 and 100, got 0
/// ```
///
/// The built-in constraints are `.in(range)` (integers and numbers), `.nonEmpty` (strings and
/// arrays), `.length(range)` (strings), `.count(range)` (arrays) and `.oneOf(values)`. An app's own
/// pairs the schema members that describe it with the check:
/// `ValueConstraint(schema: ["pattern": "^[0-9]+$"]) { $0.allSatisfy(\.isNumber) ? nil : "must be digits" }`.
public struct ValueConstraint<Value> {
    /// The members it adds to the value's JSON Schema: `{"minimum": 1, "maximum": 100}`.
    public let schema: JSONObject
    /// What is wrong with a value, as the error says it after the path (`must not be empty`), or
    /// nil when the value meets the constraint.
    public let problem: (Value) -> String?

    /// A constraint described by `schema` and checked by `problem`; the two must agree, which
    /// `DescribedKindCheck` (in the test kit) verifies for the kinds a host serves.
    public init(schema: JSONObject, problem: @escaping (Value) -> String?) {
        self.schema = schema
        self.problem = problem
    }
}

extension ValueConstraint where Value: BinaryInteger {
    /// Between the bounds, inclusive: `must be between 1 and 100, got 0`.
    public static func `in`(_ range: ClosedRange<Value>) -> Self {
        Self(schema: ["minimum": JSON(integer: range.lowerBound), "maximum": JSON(integer: range.upperBound)]) { value in
            range.contains(value) ? nil : "must be between \(range.lowerBound) and \(range.upperBound), got \(value)"
        }
    }

    /// At least the bound: `must be at least 1, got 0`.
    public static func `in`(_ range: PartialRangeFrom<Value>) -> Self {
        Self(schema: ["minimum": JSON(integer: range.lowerBound)]) { value in
            range.contains(value) ? nil : "must be at least \(range.lowerBound), got \(value)"
        }
    }

    /// At most the bound: `must be at most 100, got 101`.
    public static func `in`(_ range: PartialRangeThrough<Value>) -> Self {
        Self(schema: ["maximum": JSON(integer: range.upperBound)]) { value in
            range.contains(value) ? nil : "must be at most \(range.upperBound), got \(value)"
        }
    }
}

extension ValueConstraint where Value == Double {
    /// Between the bounds, inclusive: `must be between 0.5 and 2.0, got 3.0`.
    public static func `in`(_ range: ClosedRange<Double>) -> Self {
        Self(schema: ["minimum": .double(range.lowerBound), "maximum": .double(range.upperBound)]) { value in
            range.contains(value) ? nil : "must be between \(range.lowerBound) and \(range.upperBound), got \(value)"
        }
    }
}

extension ValueConstraint where Value: Collection {
    /// Not empty: `{"minLength": 1}` for a string, `{"minItems": 1}` for an array; `must not be empty`.
    public static var nonEmpty: Self {
        Self(schema: [Value.self is any StringProtocol.Type ? "minLength" : "minItems": 1]) { value in
            value.isEmpty ? "must not be empty" : nil
        }
    }
}

extension ValueConstraint where Value == String {
    /// A length in the bounds, counted in Unicode scalars as JSON Schema counts it:
    /// `must be 1 to 80 characters long, got 81`.
    public static func length(_ range: ClosedRange<Int>) -> Self {
        Self(schema: ["minLength": JSON(range.lowerBound), "maxLength": JSON(range.upperBound)]) { value in
            let length = value.unicodeScalars.count
            return range.contains(length) ? nil : "must be \(range.lowerBound) to \(range.upperBound) characters long, got \(length)"
        }
    }
}

extension ValueConstraint {
    /// A number of elements in the bounds: `must have 1 to 10 elements, got 0`.
    public static func count<Element>(_ range: ClosedRange<Int>) -> Self where Value == [Element] {
        Self(schema: ["minItems": JSON(range.lowerBound), "maxItems": JSON(range.upperBound)]) { value in
            range.contains(value.count) ? nil : "must have \(range.lowerBound) to \(range.upperBound) elements, got \(value.count)"
        }
    }
}

extension ValueConstraint where Value: Equatable & Encodable {
    /// One of `values`: `{"enum": […]}`; `must be "all", "open" or "done"`. The value refused is not
    /// repeated: a client that mixed up its fields may have sent a secret.
    public static func oneOf(_ values: [Value]) -> Self {
        let json = values.map { JSONValueEncoder.encode($0) }
        return Self(schema: ["enum": .array(json)]) { value in
            values.contains(value) ? nil : "must be \(JSONAlternatives.text(json))"
        }
    }
}

/// `"a", "b" or "c"`: how messages list the values accepted.
enum JSONAlternatives {
    static func text(_ values: [JSON]) -> String {
        let texts = values.map(\.description)
        guard let last = texts.last else { return "nothing" }
        return texts.count == 1 ? last : "\(texts.dropLast().joined(separator: ", ")) or \(last)"
    }
}

extension JSON {
    /// An integer of any width, clamped to 64 bits.
    init(integer value: some BinaryInteger) { self = .int(Int64(clamping: value)) }
}
