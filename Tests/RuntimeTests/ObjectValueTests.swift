import Testing
import VMHostTesting

/// A text direction: an enum with string raw values.
enum Direction: String, CaseIterable, InputValue, JSONEncodable {
    case up, down
}

/// A priority: an enum with integer raw values.
enum Priority: Int, CaseIterable, InputValue, JSONEncodable {
    case low = 1, high = 3
}

/// `{from, to?}`: an object nested in args, and written as an output too: one schema for both.
struct Span: ObjectValue, JSONEncodable, Sendable, Equatable {
    var from: Int
    var to: Int?
    init(from: Int, to: Int?) {
        self.from = from
        self.to = to
    }
    init(reader: ObjectReader) throws(JSONDecodingError) {
        from = try reader.required("from", .in(0...))
        to = try reader.optional("to", .in(...1000))
    }
    var json: JSON { ["from": JSON(from), "to": to.map { JSON($0) } ?? .null] }
}

/// Args reading one member of every supported type and constraint.
struct EveryKindOfArgs: ViewModelArgs, Equatable {
    var name: String
    var code: String?
    var count: Int
    var total: Int64?
    var ratio: Double
    var enabled: Bool
    var tags: [String]
    var ids: [String]?
    var direction: Direction
    var priority: Priority?
    var span: Span
    var locale: String

    init(reader: ObjectReader) throws(JSONDecodingError) {
        name = try reader.required("name", .nonEmpty)
        code = try reader.optional("code", .length(4...6))
        count = try reader.optional("count", .in(1...100), default: 20)
        total = try reader.optional("total")
        ratio = try reader.optional("ratio", .in(0.5...2.0), default: 1.0)
        enabled = try reader.optional("enabled", default: true)
        tags = try reader.required("tags", .nonEmpty)
        ids = try reader.optional("ids", .count(1...3))
        direction = try reader.optional("direction", default: .up)
        priority = try reader.optional("priority")
        span = try reader.required("span")
        locale = try reader.optional("locale", .oneOf(["zh-Hans", "en"]), default: "zh-Hans")
    }
}

/// What a schema cannot show: an app's own constraint, whose `pattern` the test kit does not judge,
/// and a check across members after the reads.
struct CheckedArgs: ViewModelArgs {
    var digits: String?
    var from: Int
    var to: Int
    init(reader: ObjectReader) throws(JSONDecodingError) {
        digits = try reader.optional("digits", ValueConstraint(schema: ["pattern": "^[0-9]+$"]) { text in
            text.unicodeScalars.allSatisfy { ("0"..."9").contains($0) } ? nil : "must be digits only"
        })
        from = try reader.optional("from", default: 0)
        to = try reader.optional("to", default: 10)
        guard to >= from else { throw JSONDecodingError(path: reader.path(of: "to"), problem: "must not be before from (\(from)), got \(to)") }
    }
}

/// Reads `locale` only in some cases: its schema is written by hand.
struct HandWrittenArgs: ViewModelArgs {
    var mode: String
    var locale: String?
    static var jsonSchema: JSON {
        [
            "type": "object",
            "properties": ["mode": ["type": "string", "enum": ["plain", "localized"]], "locale": ["type": "string"]],
            "required": ["mode"], "additionalProperties": false,
        ]
    }
    init(reader: ObjectReader) throws(JSONDecodingError) {
        mode = try reader.required("mode", .oneOf(["plain", "localized"]))
        locale = mode == "localized" ? try reader.optional("locale") : nil
    }
}

@Suite("Args declared by their reads")
@HostActor
struct ObjectValueTests {
    func read<Args: ViewModelArgs>(_ type: Args.Type, _ json: JSON) throws(JSONDecodingError) -> Args {
        try Args(json: json, path: "params.args")
    }

    /// What a read of `json` fails with, or nil.
    func problem<Args: ViewModelArgs>(_ type: Args.Type, _ json: JSON) -> String? {
        do throws(JSONDecodingError) {
            _ = try read(type, json)
            return nil
        } catch {
            return error.description
        }
    }

    let valid: JSON = ["name": "n", "tags": ["t"], "span": ["from": 0]]

    func with(_ key: String, _ value: JSON) -> JSON {
        var object = valid.objectValue ?? [:]
        object[key] = value
        return .object(object)
    }

    @Test func eachTypeAndConstraintDecidesItsMembersSchema() {
        let properties: JSONObject = [
            "name": ["type": "string", "minLength": 1],
            "code": ["type": "string", "minLength": 4, "maxLength": 6],
            "count": ["type": "integer", "minimum": 1, "maximum": 100, "default": 20],
            "total": ["type": "integer"],
            "ratio": ["type": "number", "minimum": 0.5, "maximum": 2.0, "default": 1.0],
            "enabled": ["type": "boolean", "default": true],
            "tags": ["type": "array", "items": ["type": "string"], "minItems": 1],
            "ids": ["type": "array", "items": ["type": "string"], "minItems": 1, "maxItems": 3],
            "direction": ["type": "string", "enum": ["up", "down"], "default": "up"],
            "priority": ["type": "integer", "enum": [1, 3]],
            "span": [
                "type": "object",
                "properties": ["from": ["type": "integer", "minimum": 0], "to": ["type": "integer", "maximum": 1000]],
                "required": ["from"], "additionalProperties": false,
            ],
            "locale": ["type": "string", "enum": ["zh-Hans", "en"], "default": "zh-Hans"],
        ]
        let expected: JSON = [
            "type": "object", "properties": .object(properties), "required": ["name", "tags", "span"], "additionalProperties": false,
        ]
        #expect(EveryKindOfArgs.jsonSchema == expected)
        // The members in the order of the reads, as host.describe writes them.
        #expect(EveryKindOfArgs.jsonSchema["properties"]?.objectValue?.keys == properties.keys)
        #expect(Span.jsonTypeDescription == "an object {from, to}")
        // The same schema describes it as an output: what is read and what is written agree.
        #expect(Property(Span(from: 0, to: nil), name: "span").schema == EveryKindOfArgs.jsonSchema["properties"]?["span"])
        #expect(Direction.jsonTypeDescription == #""up" or "down""#)
    }

    @Test func theReadsReturnWhatTheyRead() throws {
        let args = try read(EveryKindOfArgs.self, [
            "name": "n", "code": "abcd", "count": 7, "total": 9_000_000_000, "ratio": 0.5, "enabled": false,
            "tags": ["a", "b"], "ids": ["x"], "direction": "down", "priority": 3, "span": ["from": 2, "to": 5],
            "locale": "en",
        ])
        #expect(args.code == "abcd")
        #expect(args.count == 7)
        #expect(args.total == 9_000_000_000)
        #expect(args.ratio == 0.5)
        #expect(args.enabled == false)
        #expect(args.tags == ["a", "b"])
        #expect(args.ids == ["x"])
        #expect(args.direction == .down)
        #expect(args.priority == .high)
        #expect(args.span == Span(from: 2, to: 5))
        #expect(args.locale == "en")
    }

    @Test func missingOptionalMembersTakeTheirDefaults() throws {
        let args = try read(EveryKindOfArgs.self, with("count", .null))
        #expect(args.count == 20)
        #expect(args.code == nil)
        #expect(args.ratio == 1.0)
        #expect(args.enabled)
        #expect(args.direction == .up)
        #expect(args.locale == "zh-Hans")
    }

    @Test(arguments: [
        ("name", .null, "params.args.name: is required (a string)"),
        ("name", "", "params.args.name: must not be empty"),
        ("name", 3, "params.args.name: expected a string, got a number"),
        ("code", "abc", "params.args.code: must be 4 to 6 characters long, got 3"),
        ("count", 0, "params.args.count: must be between 1 and 100, got 0"),
        ("count", 101, "params.args.count: must be between 1 and 100, got 101"),
        ("count", 2.5, "params.args.count: expected an integer, got a fractional number"),
        ("ratio", 3, "params.args.ratio: must be between 0.5 and 2.0, got 3.0"),
        ("enabled", "yes", "params.args.enabled: expected a boolean, got a string"),
        ("tags", [], "params.args.tags: must not be empty"),
        ("tags", ["a", 1], "params.args.tags[1]: expected a string, got a number"),
        ("ids", ["a", "b", "c", "d"], "params.args.ids: must have 1 to 3 elements, got 4"),
        ("direction", "left", #"params.args.direction: must be "up" or "down""#),
        ("direction", 1, #"params.args.direction: expected "up" or "down", got a number"#),
        ("priority", 2, "params.args.priority: must be 1 or 3"),
        ("span", "0", "params.args.span: expected an object, got a string"),
        ("span", [:], "params.args.span.from: is required (an integer)"),
        ("span", ["from": -1], "params.args.span.from: must be at least 0, got -1"),
        ("span", ["from": 0, "to": 1001], "params.args.span.to: must be at most 1000, got 1001"),
        ("span", ["from": 0, "form": 1], "params.args.span.form: is not a known member (expected one of: from, to)"),
        ("locale", "fr", #"params.args.locale: must be "zh-Hans" or "en""#),
    ] as [(String, JSON, String)])
    func aRefusalNamesThePathAndTheConstraint(key: String, value: JSON, message: String) {
        #expect(problem(EveryKindOfArgs.self, with(key, value)) == message)
    }

    @Test func whatNoConstraintExpressesIsCheckedAfterTheReads() throws {
        #expect(CheckedArgs.jsonSchema["properties"]?["digits"] == ["type": "string", "pattern": "^[0-9]+$"])
        #expect(try read(CheckedArgs.self, ["digits": "042", "from": 3, "to": 3]).digits == "042")
        #expect(problem(CheckedArgs.self, ["digits": "4x"]) == "params.args.digits: must be digits only")
        #expect(problem(CheckedArgs.self, ["from": 5, "to": 4]) == "params.args.to: must not be before from (5), got 4")
        #expect(CheckedArgs.placeholder.to == 10)
    }

    @Test func unknownMembersAreRefusedBeforeAnyMemberIsRead() {
        let typo = with("pagesize", 10)
        #expect(problem(EveryKindOfArgs.self, typo)?.hasPrefix("params.args.pagesize: is not a known member (expected one of: ") == true)
        var both = typo.objectValue ?? [:]
        both["count"] = 0
        #expect(problem(EveryKindOfArgs.self, .object(both))?.hasPrefix("params.args.pagesize: ") == true)
        #expect(problem(NoArgs.self, ["x": 1]) == "params.args.x: is not a known member (none is expected)")
        #expect(problem(NoArgs.self, "x") == "params.args: expected an object, got a string")
        #expect(problem(NoArgs.self, .null) == nil)
    }

    @Test func thePlaceholderIsValidArgs() throws {
        let placeholder = EveryKindOfArgs.placeholder
        #expect(placeholder.name == "a")
        #expect(placeholder.tags == [""])
        #expect(placeholder.span == Span(from: 0, to: nil))
        #expect(placeholder.count == 20)
        #expect(placeholder.code == nil)
        // It reads back from its own JSON, and equals what the smallest value of the schema reads as.
        let smallest = JSONSchemaExample.minimal(EveryKindOfArgs.jsonSchema)
        #expect(smallest == ["name": "a", "tags": [""], "span": ["from": 0]])
        #expect(try read(EveryKindOfArgs.self, smallest) == placeholder)
    }

    @Test func noArgsDeclareNoMember() {
        #expect(NoArgs.jsonSchema == ["type": "object", "properties": [:], "additionalProperties": false])
        #expect(NoArgs.jsonTypeDescription == "an object")
    }

    @Test func aHandWrittenSchemaOverridesTheRecordedOne() throws {
        #expect(HandWrittenArgs.jsonSchema["properties"]?["locale"] == ["type": "string"])
        #expect(try read(HandWrittenArgs.self, ["mode": "localized", "locale": "en"]).locale == "en")
        #expect(problem(HandWrittenArgs.self, ["mode": "plain", "lang": "en"])?.hasPrefix("params.args.lang: is not a known member") == true)
        #expect(HandWrittenArgs.placeholder.mode == "plain")
    }

    @Test func anObjectValueIsAnInputValue() async {
        let test = ViewModelTest { EveryArgsViewModel(args: .placeholder) }
        #expect(test.context.input(named: "select")?.valueSchema == Span.jsonSchema)
        #expect(test.send("select", [:]) == .invalidValue(JSONDecodingError(path: "params.value.from", problem: "is required (an integer)")))
        await test.finish()
    }

    @Test func aKindWithTheseArgsAcceptsExactlyWhatItDescribes() {
        let factory = ViewModelFactory { args in EveryArgsViewModel(args: args) }
        #expect(factory.argsSchema == EveryKindOfArgs.jsonSchema)
        #expect(DescribedKindCheck.problems(kinds: [factory]) == [])
    }
}

@HostActor
final class EveryArgsViewModel: ViewModel {
    typealias Args = EveryKindOfArgs
    static let kind = "EveryArgs"
    let select = Trigger(of: Span.self) { _, _ in }
    init(args: Args) {}
}
