import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// Checks that kinds accept what `host.describe` says they accept and refuse what it says they
/// refuse: their args, and the value of every input.
///
/// Values are generated from each schema (its smallest value, every property filled, each enum
/// case and `anyOf` branch, bounds and one past them, a missing required member, an unknown member,
/// values of every other JSON type) and judged by the schema; each must then read, or fail to read,
/// in the kind's own reader (``ViewModelArgs/init(reader:)``, ``AnyInput/validate(_:)``). Nothing is
/// applied: a well-formed value that the view-model refuses in its current state is not a mismatch.
///
/// ```swift
/// @Test func describedInputsAreAccepted() {
///     #expect(DescribedKindCheck.problems(kinds: [TodoListViewModel.factory(api: stub)]) == [])
/// }
/// ```
@HostActor
public enum DescribedKindCheck {
    /// Every disagreement between description and readers, one line each; empty when none.
    public static func problems(kinds: [ViewModelFactory]) -> [String] {
        var problems: [String] = []
        for factory in kinds {
            let description = factory.describe(clock: ManualClock())
            let argsSchema = description["args"] ?? [:]
            for value in JSONSchemaValues.candidates(argsSchema) {
                // `args: null` reads as no args.
                let expected = JSONSchemaValues.accepts(argsSchema, value.isNull ? [:] : value)
                let context = ViewModelContext(handle: "check", kind: factory.kind, clock: ManualClock(), locale: .zhHans)
                var error: JSONDecodingError?
                do throws(JSONDecodingError) { _ = try factory.make(args: value, context: context) } catch let e { error = e }
                context.dispose()
                if expected, let error {
                    problems.append("\(factory.kind) args \(value): described as accepted, refused: \(error)")
                } else if !expected, error == nil {
                    problems.append("\(factory.kind) args \(value): described as refused, accepted")
                }
            }
            let context = ViewModelContext(handle: "check", kind: factory.kind, clock: ManualClock(), locale: .zhHans)
            do throws(JSONDecodingError) {
                _ = try factory.make(args: JSONSchemaExample.minimal(argsSchema), context: context)
            } catch {
                problems.append("\(factory.kind): the smallest described args are refused: \(error)")
                continue
            }
            defer { context.dispose() }
            for described in description["inputs"]?.arrayValue ?? [] {
                guard let name = described["name"]?.stringValue, let input = context.input(named: name) else {
                    problems.append("\(factory.kind): described input \(described["name"] ?? .null) is not declared")
                    continue
                }
                let schema = described["value"] ?? [:]
                for value in JSONSchemaValues.candidates(schema) {
                    let expected = JSONSchemaValues.accepts(schema, value)
                    var error: JSONDecodingError?
                    do throws(JSONDecodingError) { try input.validate(value) } catch let e { error = e }
                    if expected, let error {
                        problems.append("\(factory.kind).\(name) \(value): described as accepted, refused: \(error)")
                    } else if !expected, error == nil {
                        problems.append("\(factory.kind).\(name) \(value): described as refused, accepted")
                    }
                }
            }
        }
        return problems
    }
}

/// Generates values from a JSON Schema and judges them by it (the subset listed in
/// ``JSONSchemaExample``; `pattern` and `format` are not judged). A declared member whose value is
/// `null` is judged absent, as ``JSONReader`` reads it.
public enum JSONSchemaValues {
    /// Values around `schema`: some it accepts and some it refuses.
    public static func candidates(_ schema: JSON, depth: Int = 2) -> [JSON] {
        var values: [JSON] = [.null, .bool(true), .int(0), .int(-1), .double(1.5), .string(""), .string("a"), [], [:], ["zz": 1]]
        guard case .object(let object) = schema else { return values }
        values.append(JSONSchemaExample.minimal(schema))
        values += object["enum"]?.arrayValue ?? []
        if let constant = object["const"] { values.append(constant) }
        for branch in object["anyOf"]?.arrayValue ?? object["oneOf"]?.arrayValue ?? [] where depth > 0 {
            values += candidates(branch, depth: depth - 1)
        }
        if let low = object["minimum"]?.intValue { values += [.int(low), .int(low &- 1)] }
        if let high = object["maximum"]?.intValue { values += [.int(high), .int(high &+ 1)] }
        if let length = object["minLength"]?.intValue, length > 0, length < 1024 {
            values += [.string(String(repeating: "a", count: Int(length))), .string(String(repeating: "a", count: Int(length) - 1))]
        }
        if let length = object["maxLength"]?.intValue, length >= 0, length < 1024 {
            values += [.string(String(repeating: "a", count: Int(length))), .string(String(repeating: "a", count: Int(length) + 1))]
        }
        if let items = object["items"], depth > 0 {
            values += candidates(items, depth: depth - 1).map { .array([$0]) }
        }
        if let properties = object["properties"]?.objectValue {
            let minimal = JSONSchemaExample.minimal(schema).objectValue ?? [:]
            var full = minimal
            for property in properties where full[property.key] == nil {
                full.append(property.key, JSONSchemaExample.minimal(property.value))
            }
            values.append(.object(full))
            for required in minimal.keys {
                values.append(.object(JSONObject(minimal.members.filter { $0.key != required }.map { ($0.key, $0.value) })))
            }
            var extra = minimal
            extra.append("notDeclared", 1)
            values.append(.object(extra))
            if depth > 0 {
                for property in properties {
                    for value in candidates(property.value, depth: depth - 1) {
                        var variant = full
                        variant[property.key] = value
                        values.append(.object(variant))
                    }
                }
            }
        }
        var seen = Set<JSON>()
        return values.filter { seen.insert($0).inserted }
    }

    /// Whether `schema` accepts `value`.
    public static func accepts(_ schema: JSON, _ value: JSON) -> Bool {
        guard case .object(let object) = schema else { return schema != .bool(false) }
        if let constant = object["const"], constant != value { return false }
        if let cases = object["enum"]?.arrayValue, !cases.contains(value) { return false }
        if let branches = object["anyOf"]?.arrayValue ?? object["oneOf"]?.arrayValue,
           !branches.contains(where: { accepts($0, value) }) { return false }
        if let type = object["type"] {
            let types = type.arrayValue?.compactMap(\.stringValue) ?? [type.stringValue].compactMap { $0 }
            guard types.contains(where: { has(type: $0, value) }) else { return false }
        }
        switch value {
        case .int, .double:
            if let low = object["minimum"]?.doubleValue, let number = value.doubleValue, number < low { return false }
            if let high = object["maximum"]?.doubleValue, let number = value.doubleValue, number > high { return false }
        case .string(let text):
            if let low = object["minLength"]?.intValue, text.unicodeScalars.count < low { return false }
            if let high = object["maxLength"]?.intValue, text.unicodeScalars.count > high { return false }
        case .array(let elements):
            if let low = object["minItems"]?.intValue, elements.count < low { return false }
            if let high = object["maxItems"]?.intValue, elements.count > high { return false }
            if let items = object["items"], !elements.allSatisfy({ accepts(items, $0) }) { return false }
        case .object(let members):
            let properties = object["properties"]?.objectValue ?? [:]
            for name in object["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where members[name] ?? .null == .null {
                return false
            }
            for member in members {
                // JSONReader reads a null member as an absent one.
                if member.value.isNull, properties[member.key] != nil { continue }
                if let property = properties[member.key] {
                    if !accepts(property, member.value) { return false }
                } else if let additional = object["additionalProperties"], !accepts(additional, member.value) {
                    return false
                }
            }
        default:
            break
        }
        return true
    }

    private static func has(type: String, _ value: JSON) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): true
        case ("integer", .int): true
        case ("number", .int), ("number", .double): true
        default: false
        }
    }
}
