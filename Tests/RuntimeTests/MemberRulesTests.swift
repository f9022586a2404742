import Testing
import VMHostTesting
@testable import VMHostRuntime

// The member rules of the binding (docs/Guide.md, "Members"), one test each: what is bound, and
// how a kind that breaks a rule stops (a programmer's error, at its first instance, with a message
// that names the kind and the member).

/// A kind's common part, declared in a superclass.
@HostActor
class BaseForm: ViewModel {
    class var kind: String { "BaseForm" }
    @Input var name = ""
    @Output var saved = 0
    let save = Command(.ignore) { vm in vm.saved += 1 }
}

/// A kind whose members are partly its superclass's.
@HostActor
final class InheritingForm: BaseForm {
    override class var kind: String { "InheritingForm" }
    @Output var title = "t"
    let reset = ViewModelTrigger<InheritingForm, NoValue> { vm in vm.saved = 0 }
}

/// Members the client sees whatever their Swift visibility.
@HostActor
final class PrivateMembers: ViewModel {
    static let kind = "PrivateMembers"
    @Input private var secretlyPublic = ""
    @Output private var shown = 1
    private let hidden = Event<Int>()
    fileprivate let go = Trigger { _ in }
}

/// A `lazy` member touched by the initializer (stored as `$__lazy_storage_$_retry`).
@HostActor
final class LazyTouched: ViewModel {
    static let kind = "LazyTouched"
    lazy var retry = Command(.ignore) { _ in }
    init() { _ = retry }
}

/// A `lazy` member nothing touched before the binding.
@HostActor
final class LazyUntouched: ViewModel {
    static let kind = "LazyUntouched"
    @Output var count = 0
    lazy var refresh = Command(.ignore) { _ in }
}

/// A member held as an optional.
@HostActor
final class OptionalMember: ViewModel {
    static let kind = "OptionalMember"
    var load: Command<NoValue, Void>? = Command(.ignore) { _ in }
}

/// Members made while building and held in an array: no stored property is theirs.
@HostActor
final class MembersInAnArray: ViewModel {
    static let kind = "MembersInAnArray"
    @Output var count = 0
    let steps = [Event<Int>(), Event<Int>()]
}

/// A member made by the initializer and kept nowhere.
@HostActor
final class DroppedMember: ViewModel {
    static let kind = "DroppedMember"
    @Output var count = 0
    init() { _ = Event<String>() }
}

@HostActor
private func describe<VM: ViewModel>(_ make: @escaping @HostActor () -> VM) -> (inputs: [String], outputs: [String]) {
    let description = ViewModelFactory { (_: VM.Args) in make() }.describe()
    return (
        description["inputs"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [],
        description["outputs"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
    )
}

/// A kind made without arguments.
@HostActor
protocol MadeBare: ViewModel { init() }
extension LazyTouched: MadeBare {}
extension LazyUntouched: MadeBare {}
extension OptionalMember: MadeBare {}
extension MembersInAnArray: MadeBare {}
extension DroppedMember: MadeBare {}

/// Builds a view-model of `type` the way the host does; what breaks a rule stops here.
@HostActor
private func build<VM: MadeBare>(_ type: VM.Type) {
    let context = ViewModelContext(handle: "v", kind: VM.kind, clock: ManualClock(), locale: .en)
    _ = context.build { VM() }
    context.dispose()
}

/// What a process that stopped wrote to stderr.
private func stderr(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

@Suite("The member rules of the binding")
@HostActor
struct MemberRulesTests {
    @Test func membersOfASuperclassAreBoundBeforeTheKindsOwn() async {
        let (inputs, outputs) = describe { InheritingForm() }
        #expect(inputs == ["name", "save", "reset"])
        #expect(outputs == ["saved", "title", "error"])
        // Bound, not only named: the superclass's command runs on the instance.
        let test = ViewModelTest { InheritingForm() }
        let run = test.execute("save")
        await test.settle()
        #expect(run.outcome == .succeeded(nil))
        #expect(test.viewModel.saved == 1)
        #expect(test.send("reset") == nil)
        #expect(test.viewModel.saved == 0)
        _ = test.take()
        await test.finish()
    }

    @Test func visibilityInSwiftDoesNotHideAMemberFromTheWire() {
        let (inputs, outputs) = describe { PrivateMembers() }
        #expect(inputs == ["secretlyPublic", "go"])
        #expect(outputs == ["shown", "error", "hidden"])
    }

    @Test func aLazyMemberTouchedByTheInitializerIsRefusedByName() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await build(LazyTouched.self)
        }
        #expect(stderr(result).contains("LazyTouched.retry: a member must not be `lazy`"))
        #expect(!stderr(result).contains("$__lazy_storage"))
    }

    @Test func aLazyMemberNotTouchedIsRefusedByName() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await build(LazyUntouched.self)
        }
        #expect(stderr(result).contains("LazyUntouched.refresh: a member must not be `lazy`"))
    }

    @Test func anOptionalMemberIsRefusedByName() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await build(OptionalMember.self)
        }
        #expect(stderr(result).contains("OptionalMember.load: a member must not be optional"))
    }

    @Test func aStrayMemberIsNamedByWhereTheKindHoldsIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await build(MembersInAnArray.self)
        }
        #expect(stderr(result).contains("MembersInAnArray.steps[0]: a member made while building the view-model (Event<Int>) is held by `steps[0]`"))
    }

    @Test func aStrayMemberHeldNowhereIsNamedByItsType() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await build(DroppedMember.self)
        }
        #expect(stderr(result).contains("DroppedMember: a member made while building the view-model (Event<String>) is held by no stored property"))
    }

    /// The second instance of a kind is bound from the layout found for the first: the same names
    /// in the same order, each member its own instance's.
    @Test func theLayoutFoundOnceBindsEveryInstanceToItsOwnMembers() {
        let first = ViewModelContext(handle: "a", kind: Form.kind, clock: ManualClock(), locale: .en)
        let second = ViewModelContext(handle: "b", kind: Form.kind, clock: ManualClock(), locale: .en)
        let a = first.build { Form() }
        let b = second.build { Form() }
        #expect(first.inputs.map(\.name) == second.inputs.map(\.name))
        #expect(first.properties.map(\.name) == ["first", "valid", "stage"])
        #expect(second.properties.map(\.name) == ["first", "valid", "stage"])
        a.first = "x"
        #expect(first.property(named: "first")?.json == "x")
        #expect(second.property(named: "first")?.json == "")
        #expect(b.$first !== a.$first)
        first.dispose()
        second.dispose()
    }
}
