import Testing
import VMHostRuntime
import VMHostTesting

/// A value carried by a trigger and a command: `{id}`.
struct ItemReference: ObjectValue, Sendable {
    var id: String
    init(reader: ObjectReader) throws(JSONDecodingError) {
        id = try reader.required("id", .nonEmpty)
    }
}

/// A kind declared every way the authoring surface allows, to pin what it derives.
@HostActor
final class ItemsViewModel: ViewModel {
    static let kind = "Items"

    struct Args: ViewModelArgs {
        var listId: String
        var limit: Int
        init(reader: ObjectReader) throws(JSONDecodingError) {
            listId = try reader.required("listId", .nonEmpty)
            limit = try reader.optional("limit", .in(1...9), default: 3)
        }
    }

    @Output var ids = ["a", "b", "locked"]
    let opened = Event<String>()
    let title = Trigger(of: String.self) { _, _ in }
    let open = Trigger(of: ItemReference.self) { vm, reference throws(InputError) in
        try vm.check(reference)
        vm.opened.emit(reference.id)
    }
    let remove = Command(
        .ignorePerKey { $0.id }, of: ItemReference.self,
        check: { vm, reference throws(InputError) in try vm.check(reference) },
        disabled: { _, reference in reference.id == "locked" ? "\(reference.id) is locked" : nil }
    ) { vm, reference in
        try await vm.context.clock.sleep(for: .milliseconds(10))
        vm.ids.removeAll { $0 == reference.id }
    }
    let load = Command(.latest, returning: Int.self) { vm in
        try await vm.context.clock.sleep(for: .milliseconds(10))
        return vm.ids.count
    }

    init(args: Args) {
        // Work started by the initializer: a load and a timer.
        load.run()
        schedule(after: .seconds(1)) { vm in vm.ids = [] }
    }

    func check(_ reference: ItemReference) throws(InputError) {
        guard ids.contains(reference.id) else { throw .refused("id", "no item \"\(reference.id)\"") }
    }
}

@Suite("Declaring a kind")
@HostActor
struct DeclarationTests {
    let factory = ViewModelFactory { args in ItemsViewModel(args: args) }

    func input(_ description: JSON, _ name: String) -> JSON? {
        description["inputs"]?.arrayValue?.first { $0["name"]?.stringValue == name }
    }

    @Test func theValueAndResultTypesDecideTheDescribedSchemas() {
        let description = factory.describe()
        #expect(input(description, "title")?["value"] == ["type": "string"])
        #expect(input(description, "open")?["value"] == ItemReference.jsonSchema)
        #expect(input(description, "remove")?["value"] == ItemReference.jsonSchema)
        #expect(input(description, "remove")?["result"] == nil)
        #expect(input(description, "load")?["value"] == ["type": "null"])
        #expect(input(description, "load")?["result"] == ["type": "integer"])
    }

    /// A synthesized optional member is written only when it has a value: its schema does not
    /// require it, whatever its type (the basic types have overloads of their own in Codable).
    @Test func anOptionalMemberOfAnOutputTypeIsNotRequired() {
        struct Opened: Codable, Equatable {
            var id: String
            var parent: String?
            var count: Int?
            var tags: [String]?
        }
        #expect(
            OutputSchemaProbe.schema(of: Opened.self) == [
                "type": "object",
                "properties": [
                    "id": ["type": "string"], "parent": ["type": "string"], "count": ["type": "integer"],
                    "tags": ["type": "array", "items": ["type": "string"]],
                ],
                "required": ["id"], "additionalProperties": false,
            ])
        #expect(JSONValueEncoder.encode(Opened(id: "t1")) == ["id": "t1"])
    }

    @Test func describeStartsNoWorkOnTheHostClock() {
        let description = factory.describe()
        #expect(description["kind"] == "Items")
    }

    @Test func thePlaceholderIsDerivedFromTheArgsReads() {
        let args = ItemsViewModel.Args.placeholder
        #expect(args.listId == "a")
        #expect(args.limit == 3)
    }

    @Test func workAndTimersOfTheInitializerStartOnceTheViewModelIsMade() async {
        let test = ViewModelTest { ItemsViewModel(args: .placeholder) }
        #expect(test.context.running == ["load"])
        await test.advance(by: .seconds(1))
        test.expect([.changed(\.$ids, [])])
        await test.finish()
    }

    @Test func aWellFormedValueWrongNowIsRefusedWithItsReason() async {
        let test = ViewModelTest { ItemsViewModel(args: .placeholder) }
        #expect(test.send("open", ["id": "zz"]) == .refused(path: "params.value.id", reason: "no item \"zz\""))
        #expect(InputError.refused("id", "no item \"zz\"").message == "params.value.id: no item \"zz\"")
        #expect(test.refusal("remove", ["id": "zz"]) == "params.value.id: no item \"zz\"")
        #expect(test.send("open", ["id": "a"]) == nil)
        test.expect([.emitted(\.opened, "a")])
        await test.advance(by: .seconds(1))
        _ = test.take()
        await test.finish()
    }

    @Test func disabledReasonAndPerKeyPolicySeeTheDecodedValue() async {
        let test = ViewModelTest { ItemsViewModel(args: .placeholder) }
        #expect(test.refusal("remove", ["id": "locked"]) == "locked is locked")
        let run = test.execute("remove", ["id": "a"])
        #expect(test.refusal("remove", ["id": "a"]) == "already running for a")
        #expect(test.refusal("remove", ["id": "b"]) == nil)
        await test.advance(ms: 10)
        #expect(run.outcome == .succeeded(nil))
        test.expect([.changed(\.$ids, ["b", "locked"])])
        await test.advance(by: .seconds(1))
        _ = test.take()
        await test.finish()
    }

    @Test func everyDescribedInputAndOutputHoldsWhatItsSchemaSays() {
        #expect(DescribedKindCheck.problems(kinds: [factory, ProbeViewModel.factory()]) == [])
    }

    @Test func theCheckFindsAnInputSchemaThatLies() {
        let problems = DescribedKindCheck.problems(kinds: [ViewModelFactory { (_: NoArgs) in LyingViewModel() }])
        #expect(problems.contains("Lying.name 0: described as accepted, refused: params.value: expected a string, got a number"))
        #expect(problems.contains("Lying.name \"\": described as refused, accepted"))
    }

    @Test func theCheckFindsAnOutputSchemaThatLies() {
        let problems = DescribedKindCheck.problems(kinds: [ViewModelFactory { (_: NoArgs) in LyingViewModel() }])
        #expect(problems.contains { $0.hasPrefix("Lying.badge: a sample value {\"label\":\"\",\"count\":0} is refused by its schema") })
        #expect(problems.contains { $0.hasPrefix("Lying.score: the value 1.5 is refused by its schema") })
    }
}

/// A badge whose hand-written schema does not say what it writes (`count` is no string).
struct Badge: Codable, Equatable, JSONEncodable {
    var label: String
    var count: Int
    var json: JSON { ["label": .string(label), "count": .int(Int64(count))] }
    static var jsonSchema: JSON { ["type": "object", "properties": ["label": ["type": "string"], "count": ["type": "string"]]] }
}

/// Declares `name` as any integer-or-string with a length, while it reads strings of any length;
/// declares outputs whose schemas refuse what they write.
@HostActor
final class LyingViewModel: ViewModel {
    static let kind = "Lying"
    @Input(schema: ["type": ["string", "integer"], "minLength": 1]) var name = ""
    @Output var badge = Badge(label: "", count: 0)
    @Output(schema: ["type": "integer"]) var score = 1.5
}

@Suite("Lifetime of a kind")
@HostActor
struct ReleaseTests {
    /// A service shared by the view-models of a host (a session, a cache).
    final class Service {
        var listeners: [() -> Void] = []
    }

    /// Keeps itself alive: it hands the shared service a closure that captures it, and never
    /// takes it back.
    final class Leaky: ViewModel {
        static let kind = "Leaky"
        @Output var count = 0
        init(service: Service) {
            service.listeners.append { [self] in count += 1 }
        }
    }

    @Test(.capturingKitIssues) func aClosureHoldingTheViewModelIsCaughtWhenTheTestEnds() async {
        let service = Service()
        let leaked = await KitIssues.comments {
            let test = ViewModelTest { Leaky(service: service) }
            await test.finish()
        }
        #expect(leaked.count == 1 && leaked.allSatisfy { $0.contains("Leaky vm1 outlived its disposal") }, "\(leaked)")
    }

    @Test func aKindDeclaredByItsMembersIsReleased() async {
        let test = ViewModelTest { ItemsViewModel(args: .placeholder) }
        await test.advance(by: .seconds(1))
        _ = test.take()
        await test.finish()
    }
}

/// The schema `host.describe` gives an output of type `Value`.
@HostActor
enum OutputSchemaProbe {
    static func schema<Value: Codable & Equatable>(of type: Value.Type) -> JSON { Event<Value>().schema }
}
