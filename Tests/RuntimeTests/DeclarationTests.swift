import Testing
import VMHostTesting

/// A value carried by a trigger and a command: `{id}`.
struct ItemReference: ObjectValue, Sendable {
    var id: String
    init(reader: ObjectReader) throws(JSONDecodingError) {
        id = try reader.required("id", .nonEmpty)
    }
}

/// A kind declared the way the declaration API allows, to pin what it derives.
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

    let context: ViewModelContext
    let ids: Property<[String]>
    let opened: Event<String>
    private(set) var remove: Command<ItemReference>!

    init(args: Args, context: ViewModelContext) {
        self.context = context
        ids = context.property("ids", ["a", "b", "locked"])
        opened = context.event("opened")
        context.trigger("title", of: String.self) { _ in }
        context.trigger("open", of: ItemReference.self) { [unowned self] reference throws(InputError) in
            guard ids.value.contains(reference.id) else { throw .refused("id", "no item \"\(reference.id)\"") }
            opened.emit(reference.id)
        }
        remove = context.command("remove", of: ItemReference.self, policy: .ignorePerKey { $0.id }) { [unowned self] reference in
            try await self.context.perform { try await self.context.clock.sleep(for: .milliseconds(10)) }
            ids.value.removeAll { $0 == reference.id }
            return nil
        }
        remove.check = { [unowned self] reference throws(InputError) in
            guard ids.value.contains(reference.id) else { throw .refused("id", "no item \"\(reference.id)\"") }
        }
        remove.disabledReason = { reference in reference.id == "locked" ? "\(reference.id) is locked" : nil }
        // Work started by the initializer: a load and a timer.
        let load = context.command("load", policy: .latest) { [unowned self] in
            try await self.context.perform { try await self.context.clock.sleep(for: .milliseconds(10)) }
            return nil
        }
        load.run()
        context.schedule(after: .seconds(1)) { [unowned self] in ids.value = [] }
    }
}

@Suite("Declaring a kind")
@HostActor
struct DeclarationTests {
    let factory = ViewModelFactory(ItemsViewModel.self) { args, context in ItemsViewModel(args: args, context: context) }

    func input(_ description: JSON, _ name: String) -> JSON? {
        description["inputs"]?.arrayValue?.first { $0["name"]?.stringValue == name }
    }

    @Test func theValueTypeDecidesTheDescribedSchema() {
        let description = factory.describe(clock: ManualClock())
        #expect(input(description, "title")?["value"] == ["type": "string"])
        #expect(input(description, "open")?["value"] == ItemReference.jsonSchema)
        #expect(input(description, "remove")?["value"] == ItemReference.jsonSchema)
        #expect(input(description, "load")?["value"] == ["type": "null"])
    }

    @Test func describeStartsNoWorkOnTheHostClock() async {
        let clock = ManualClock()
        let description = factory.describe(clock: clock)
        #expect(description["kind"] == "Items")
        #expect(clock.pendingCount == 0)
    }

    @Test func thePlaceholderIsDerivedFromTheArgsReads() {
        let args = ItemsViewModel.Args.placeholder
        #expect(args.listId == "a")
        #expect(args.limit == 3)
    }

    @Test func aWellFormedValueWrongNowIsRefusedWithItsReason() throws {
        let recorder = ViewModelRecorder(kind: "Items")
        recorder.keep(ItemsViewModel(args: .placeholder, context: recorder.context))
        #expect(throws: InputError.refused(path: "params.value.id", reason: "no item \"zz\"")) {
            try recorder.send("open", ["id": "zz"])
        }
        #expect(InputError.refused("id", "no item \"zz\"").message == "params.value.id: no item \"zz\"")
        #expect(recorder.disabledReason("remove", ["id": "zz"]) == "params.value.id: no item \"zz\"")
        try recorder.send("open", ["id": "a"])
        #expect(recorder.take() == [.event("opened", "a")])
        recorder.context.dispose()
    }

    @Test func disabledReasonAndPerKeyPolicySeeTheDecodedValue() async throws {
        let recorder = ViewModelRecorder(kind: "Items")
        recorder.keep(ItemsViewModel(args: .placeholder, context: recorder.context))
        #expect(recorder.disabledReason("remove", ["id": "locked"]) == "locked is locked")
        try recorder.execute("remove", ["id": "a"])
        #expect(recorder.disabledReason("remove", ["id": "a"]) == "already running for a")
        #expect(recorder.disabledReason("remove", ["id": "b"]) == nil)
        await recorder.advance(ms: 10)
        #expect(recorder.outcomes == [.succeeded(nil)])
        recorder.context.dispose()
    }

    @Test func everyDescribedInputAcceptsWhatItsSchemaAccepts() {
        #expect(DescribedKindCheck.problems(kinds: [factory, ProbeViewModel.factory()]) == [])
    }

    @Test func theCheckFindsASchemaThatLies() {
        let lying = ViewModelFactory(LyingViewModel.self) { _, context in LyingViewModel(context: context) }
        let problems = DescribedKindCheck.problems(kinds: [lying])
        #expect(problems.contains("Lying.name 0: described as accepted, refused: params.value: expected a string, got a number"))
        #expect(problems.contains("Lying.name \"\": described as refused, accepted"))
    }
}

/// Declares `name` as any integer-or-string with a length, while it reads strings of any length.
@HostActor
final class LyingViewModel: ViewModel {
    typealias Args = NoArgs
    static let kind = "Lying"
    init(context: ViewModelContext) {
        context.value("name", of: String.self, schema: ["type": ["string", "integer"], "minLength": 1]) { _ in }
    }
}

@Suite("Lifetime of a kind's closures")
@HostActor
struct ReleaseCheckTests {
    /// Captures the initializer's `context` in a command body: the cycle context → command → body → context.
    final class Leaky: ViewModel {
        typealias Args = NoArgs
        static let kind = "Leaky"
        let context: ViewModelContext
        init(context: ViewModelContext) {
            self.context = context
            context.command("go", policy: .latest) { [unowned self] in
                _ = self
                try await context.perform { () }
                return nil
            }
        }
    }

    final class Safe: ViewModel {
        typealias Args = NoArgs
        static let kind = "Safe"
        let context: ViewModelContext
        init(context: ViewModelContext) {
            self.context = context
            context.command("go", policy: .latest) { [unowned self] in
                try await self.context.perform { () }
                return nil
            }
        }
    }

    func check(_ make: (ViewModelContext) -> AnyObject) -> String? {
        let check: ReleaseCheck = {
            let context = ViewModelContext(handle: "vm1", kind: "K", clock: ManualClock(), locale: .en)
            context.retain(make(context))
            context.dispose()
            return context.releaseCheck()
        }()
        return check.problem
    }

    @Test func aClosureHoldingTheContextIsCaught() {
        #expect(check { Leaky(context: $0) }?.hasPrefix("K vm1 outlived its disposal: a closure declared on its context holds it.") == true)
    }

    @Test func theSafeWayPasses() {
        #expect(check { Safe(context: $0) } == nil)
    }
}
