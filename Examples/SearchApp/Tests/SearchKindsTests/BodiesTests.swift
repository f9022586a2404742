import SearchKinds
import Testing
import VMHostTesting

// Bodies as an app writes them, in a package that enables no upcoming feature: each calls ordinary
// async code and throws whatever it throws, with no `throws(InputError)` annotation. This file
// compiling is the first half of the test.

/// A free function, nonisolated and async, as an app's helpers are.
func normalized(_ text: String) async -> String {
    String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
}

/// A client whose methods are async and Sendable, as URLSession's are.
struct Echo: Sendable {
    func echo(_ text: String) async throws -> String { text }
}

/// An error that is neither a refusal nor a domain failure: a bug, answered -32603.
struct Unexpected: Error {}

@HostActor
final class BodiesViewModel: ViewModel {
    static let kind = "Bodies"

    @Output private(set) var text = ""

    /// `Task.sleep`: compiled, never run here (a test does not wait real time).
    let pause = Command(.latest) { vm in
        try await Task.sleep(for: .seconds(1))
        vm.text = "slept"
    }
    /// A free async function, a `disabled` that reads the view-model, a `check` without annotation.
    let tidy = Command(.ignore, of: String.self, check: { _, text in if text.isEmpty { throw .refused("", "empty") } },
                       disabled: { vm, _ in vm.text == "locked" ? "locked" : nil }) { vm, text in
        vm.text = await normalized(text)
    }
    /// A Sendable client's method, and a result.
    let echo = Command(.concurrent, of: String.self, returning: String.self) { vm, text in
        try await Echo().echo(text)
    }
    /// A plain error thrown from a command.
    let explode = Command(.ignore) { _ in throw Unexpected() }
    /// Work with a free function and `Task.sleep` (compiled only) and a plain error.
    let later = Work(.latest) { (vm, text: String) in
        if text == "sleep" { try await Task.sleep(for: .milliseconds(10)) }
        vm.text = await normalized(text)
        if vm.text == "bad" { throw Unexpected() }
    }
    /// Triggers that refuse, disable and fail with no annotation.
    let lock = Trigger { vm in
        if vm.text == "locked" { throw .disabled("already locked") }
        vm.text = "locked"
    }
    let pick = Trigger(of: String.self) { vm, choice in
        guard ["a", "b"].contains(choice) else { throw .refused("", "pick a or b") }
        if choice == "b" { throw SearchFailure.unavailable }
        vm.text = choice
    }
}

@Suite("Bodies that call ordinary async code")
@HostActor
struct BodiesTests {
    @Test func aCommandCallsAFreeAsyncFunctionAndAChecksRefusalNeedsNoAnnotation() async {
        let test = ViewModelTest { BodiesViewModel() }
        let refused = test.execute("tidy", "")
        #expect(refused.refusal == .refused(path: "params.value", reason: "empty"))
        #expect(await test.send(\.tidy, "  tidy  ").finished() == .succeeded(nil))
        test.expect([.changed(\.$text, "tidy")])
        #expect(await test.send(\.echo, "hello").finished() == .succeeded("hello"))
        await test.finish()
    }

    @Test func aCommandThatThrowsAPlainErrorIsABug() async {
        let test = ViewModelTest { BodiesViewModel() }
        guard case .crashed? = await test.send(\.explode).finished() else {
            Issue.record("a plain error should end the run as a crash (-32603)")
            return
        }
        await test.finish()
    }

    @Test func workCallsAFreeAsyncFunctionAndMayThrowAnyError() async {
        let test = ViewModelTest { BodiesViewModel() }
        test.viewModel.later.run(" done ")
        _ = await test.until("the work to end") { !test.viewModel.later.isRunning }
        test.expect([.changed(\.$text, "done")])
        test.viewModel.later.run("bad")
        _ = await test.until("the work to end") { !test.viewModel.later.isRunning }
        test.expect([.changed(\.$text, "bad")])
        await test.finish()
    }

    @Test func triggersRefuseDisableAndFailWithoutAnnotations() async {
        let test = ViewModelTest { BodiesViewModel() }
        #expect(test.fire(\.pick, "c") == .refused(path: "params.value", reason: "pick a or b"))
        #expect(test.fire(\.pick, "a") == nil)
        #expect(test.fire(\.lock) == nil)
        #expect(test.fire(\.lock) == .disabled(reason: "already locked"))
        // A domain failure is answered -32004 and emitted on `error`, as a command's is.
        #expect(test.fire(\.pick, "b") == nil)
        var failure = SearchFailure.unavailable.domainError(in: .en)
        failure.input = "pick"
        test.expect([.changed(\.$text, "a"), .changed(\.$text, "locked"), .failed(failure)])
        await test.finish()
    }
}
