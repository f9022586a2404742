import VMHost

/// Checks that kinds keep what `host.describe` says of them: that they accept the args and input
/// values it says they accept and refuse what it says they refuse, and that what they write (their
/// outputs and their commands' results) is what it says they write.
///
/// Input values are generated from each schema (its smallest value, every property filled, each
/// enum case and `anyOf` branch, bounds and one past them, a missing required member, an unknown
/// member, values of every other JSON type) and judged by the schema; each must then read, or
/// fail to read, in the kind's own reader (``ViewModelArgs/init(reader:)``, ``AnyInput/validate(_:)``).
/// Outputs are checked on a view-model made from the smallest described args: each property's
/// value, and a value of each output's and result's type made of placeholders (every array with
/// one element), must be accepted by its schema, so that a schema written by hand and the JSON the
/// type writes cannot drift apart. Nothing is sent.
///
/// ```swift
/// @Test func theDescriptionHolds() {
///     #expect(DescribedKindCheck.problems(kinds: [TodoListViewModel.factory(api: stub)]) == [])
/// }
/// ```
@HostActor
public enum DescribedKindCheck {
    /// Every disagreement between description and kind, one line each; empty when none.
    public static func problems(kinds: [ViewModelFactory]) -> [String] {
        var problems: [String] = []
        for factory in kinds {
            let description = factory.describe()
            let argsSchema = description["args"] ?? [:]
            for value in JSONSchemaValues.candidates(argsSchema) {
                // `args: null` reads as no args.
                let expected = JSONSchemaValues.accepts(argsSchema, value.isNull ? [:] : value)
                let context = ViewModelContext(handle: "check", kind: factory.kind, clock: ManualClock(), locale: .en)
                var error: JSONDecodingError?
                do throws(JSONDecodingError) { _ = try factory.make(args: value, context: context) } catch let e { error = e }
                context.dispose()
                if expected, let error {
                    problems.append("\(factory.kind) args \(value): described as accepted, refused: \(error)")
                } else if !expected, error == nil {
                    problems.append("\(factory.kind) args \(value): described as refused, accepted")
                }
            }
            let context = ViewModelContext(handle: "check", kind: factory.kind, clock: ManualClock(), locale: .en)
            do throws(JSONDecodingError) {
                _ = try factory.make(args: JSONSchemaExample.minimal(argsSchema), context: context)
            } catch {
                problems.append("\(factory.kind): the smallest described args are refused: \(error)")
                continue
            }
            defer { context.dispose() }
            problems += inputProblems(factory.kind, description, context)
            problems += outputProblems(factory.kind, description, context)
        }
        return problems
    }

    private static func inputProblems(_ kind: String, _ description: JSON, _ context: ViewModelContext) -> [String] {
        var problems: [String] = []
        for described in description["inputs"]?.arrayValue ?? [] {
            guard let name = described["name"]?.stringValue, let input = context.input(named: name) else {
                problems.append("\(kind): described input \(described["name"] ?? .null) is not declared")
                continue
            }
            let schema = described["value"] ?? [:]
            for value in JSONSchemaValues.candidates(schema) {
                let expected = JSONSchemaValues.accepts(schema, value)
                var error: JSONDecodingError?
                do throws(JSONDecodingError) { try input.validate(value) } catch let e { error = e }
                if expected, let error {
                    problems.append("\(kind).\(name) \(value): described as accepted, refused: \(error)")
                } else if !expected, error == nil {
                    problems.append("\(kind).\(name) \(value): described as refused, accepted")
                }
            }
            if let command = input as? any AnyCommand, let result = command.resultSample {
                if described["result"] != result.schema {
                    problems.append("\(kind).\(name): the result is described as \(described["result"] ?? .null), not \(result.schema)")
                }
                if let sample = result.sample, !JSONSchemaValues.accepts(result.schema, sample, nullIsAbsent: false) {
                    problems.append("\(kind).\(name): the result \(sample) is refused by its schema \(result.schema)")
                }
            }
        }
        return problems
    }

    private static func outputProblems(_ kind: String, _ description: JSON, _ context: ViewModelContext) -> [String] {
        var problems: [String] = []
        var schemas: [String: JSON] = [:]
        for described in description["outputs"]?.arrayValue ?? [] {
            if let name = described["name"]?.stringValue { schemas[name] = described["schema"] ?? [:] }
        }
        for property in context.properties {
            let schema = schemas[property.name] ?? property.schema
            for (what, value) in [("the value", Optional(property.json)), ("a sample value", property.sample)] {
                guard let value, !JSONSchemaValues.accepts(schema, value, nullIsAbsent: false) else { continue }
                problems.append("\(kind).\(property.name): \(what) \(value) is refused by its schema \(schema)")
            }
        }
        for event in context.events {
            let schema = schemas[event.name] ?? event.schema
            if let sample = event.sample, !JSONSchemaValues.accepts(schema, sample, nullIsAbsent: false) {
                problems.append("\(kind).\(event.name): a sample value \(sample) is refused by its schema \(schema)")
            }
        }
        return problems
    }
}

/// Generates values from a JSON Schema and judges them by it (the subset listed in
/// ``JSONSchemaExample``; `pattern` and `format` are not judged). A declared member whose value is
/// `null` is judged absent, as ``JSONReader`` reads it.
package enum JSONSchemaValues {
    /// Values around `schema`: some it accepts and some it refuses.
    package static func candidates(_ schema: JSON, depth: Int = 2) -> [JSON] {
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

    /// Whether `schema` accepts `value`. With `nullIsAbsent` (how inputs are read), a member whose
    /// value is `null` counts as missing; without it (what outputs write), `null` is a value.
    package static func accepts(_ schema: JSON, _ value: JSON, nullIsAbsent: Bool = true) -> Bool {
        guard case .object(let object) = schema else { return schema != .bool(false) }
        if let constant = object["const"], constant != value { return false }
        if let cases = object["enum"]?.arrayValue, !cases.contains(value) { return false }
        if let branches = object["anyOf"]?.arrayValue ?? object["oneOf"]?.arrayValue,
           !branches.contains(where: { accepts($0, value, nullIsAbsent: nullIsAbsent) }) { return false }
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
            if let items = object["items"], !elements.allSatisfy({ accepts(items, $0, nullIsAbsent: nullIsAbsent) }) { return false }
        case .object(let members):
            let properties = object["properties"]?.objectValue ?? [:]
            for name in object["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
                guard let member = members[name], !(nullIsAbsent && member.isNull) else { return false }
            }
            for member in members {
                // JSONReader reads a null member as an absent one.
                if nullIsAbsent, member.value.isNull, properties[member.key] != nil { continue }
                if let property = properties[member.key] {
                    if !accepts(property, member.value, nullIsAbsent: nullIsAbsent) { return false }
                } else if let additional = object["additionalProperties"], !accepts(additional, member.value, nullIsAbsent: nullIsAbsent) {
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
