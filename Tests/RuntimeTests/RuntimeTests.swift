@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
@testable import VMHostRuntime

/// A form: two fields, a validity derived from both, an event.
@HostActor
final class Form: ViewModel {
    static let kind = "Form"
    @Field var first = ""
    @Input var second = ""
    @Derived({ !$0.first.isEmpty && !$0.second.isEmpty }) var valid: Bool
    @Derived({ $0.first.isEmpty ? "empty" : $0.valid ? "ready" : "half" }) var stage: String
    let ping = Event<Int>()
    let send = Trigger(of: Int.self) { vm, value in vm.ping.emit(value) }
}

@Suite("Properties, derived outputs and events")
@HostActor
struct PropertyTests {
    @Test func equalValuesAreNotReEmitted() async {
        let test = ViewModelTest { Form() }
        test.set(\.$first, "a")
        test.set(\.$first, "a")
        test.set(\.$first, "b")
        test.expect([.changed(\.$first, "a"), .changed(\.$stage, "half"), .changed(\.$first, "b")])
        await test.finish()
    }

    @Test func aDerivedOutputFindsItsSourcesAndChangesOnlyWhenItsResultDoes() async {
        let test = ViewModelTest { Form() }
        test.set(\.$first, "x")
        test.set(\.$second, "z")
        test.set(\.$second, "zz")
        test.set(\.$first, "")
        test.expect([
            .changed(\.$first, "x"), .changed(\.$stage, "half"),
            .changed(\.$valid, true), .changed(\.$stage, "ready"),
            .changed(\.$first, ""), .changed(\.$valid, false), .changed(\.$stage, "empty"),
        ])
        await test.finish()
    }

    @Test func aDerivedOutputIsComputedOnceTheViewModelIsMade() async {
        let test = ViewModelTest { Form() }
        #expect(test.viewModel.stage == "empty")
        #expect(test.value("valid") == false)
        await test.finish()
    }

    @Test func eventsAreEveryEmissionInOrder() async {
        let test = ViewModelTest { Form() }
        test.fire(\.send, 1)
        test.fire(\.send, 1)
        test.fire(\.send, 2)
        test.expect([.emitted(\.ping, 1), .emitted(\.ping, 1), .emitted(\.ping, 2)])
        await test.finish()
    }

    @Test func membersAreNamedByTheirPropertiesInDeclarationOrder() {
        let description = ViewModelFactory { (_: NoArgs) in Form() }.describe()
        #expect(description["inputs"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["first", "second", "send"])
        #expect(description["outputs"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["first", "valid", "stage", "error", "ping"])
    }
}

@Suite("Commands")
@HostActor
struct CommandTests {
    @Test func aCommandRunsAndAnswersItsTypedResult() async {
        let test = ViewModelTest { ProbeViewModel(args: .init()) }
        let run = test.send(\.work, ["ms": 50])
        test.expect([.changed(\.$busy, true)])
        await test.settle()
        test.expect([.changed(\.$loading, true)])
        await test.advance(ms: 50)
        // The result applies before the run ends: its flags drop after, with no blip.
        test.expect([.changed(\.$count, 1), .changed(\.$loading, false), .changed(\.$busy, false)])
        #expect(run.outcome == .succeeded(1))
        await test.finish()
    }

    @Test func latestCancelsTheRunningRunAndAppliesNothingOfIt() async {
        let test = ViewModelTest { ProbeViewModel(args: .init()) }
        let first = test.send(\.work, ["ms": 100])
        await test.settle()
        await test.advance(ms: 50)
        let second = test.send(\.work, ["ms": 100])
        #expect(first.outcome == .cancelled)
        await test.advance(ms: 100)
        #expect(second.outcome == .succeeded(1))
        #expect(test.viewModel.count == 1)
        #expect(!test.viewModel.busy && !test.viewModel.loading)
        _ = test.take()
        await test.finish()
    }

    @Test func ignoreRefusesWhileRunningWithAReason() async {
        let test = ViewModelTest { ProbeViewModel(args: .init()) }
        let first = test.send(\.once)
        #expect(test.send(\.once).refusal == .disabled(reason: "already running"))
        await test.advance(ms: 100)
        #expect(await first.finished() == .succeeded("done"))
        let again = test.send(\.once)
        await test.advance(ms: 100)
        #expect(again.value == "done")
        _ = test.take()
        await test.finish()
    }

    @Test func ignorePerKeyRefusesOnlyTheSameKey() async {
        let test = ViewModelTest { ProbeViewModel(args: .init()) }
        let g1 = test.send(\.perKey, ["key": "g1"])
        let g2 = test.send(\.perKey, ["key": "g2"])
        #expect(test.send(\.perKey, ["key": "g1"]).refusal == .disabled(reason: "already running for g1"))
        await test.advance(ms: 100)
        #expect(g1.value == "g1" && g2.value == "g2")
        _ = test.take()
        await test.finish()
    }

    @Test func concurrentRunsSideBySideAndActivityCountsEveryRun() async {
        let test = ViewModelTest { ProbeViewModel(args: .init()) }
        let short = test.send(\.parallel, ["ms": 100])
        let long = test.send(\.parallel, ["ms": 200])
        await test.settle()
        #expect(test.context.activity.count == 2)
        await test.advance(ms: 100)
        #expect(test.viewModel.loading)
        await test.advance(ms: 100)
        #expect(!test.viewModel.loading)
        test.expect([.changed(\.$loading, true), .changed(\.$loading, false)])
        #expect(short.value == 100 && long.value == 200)
        await test.finish()
    }

    @Test func aDomainFailureIsOneErrorEventTaggedWithTheInput() async {
        let test = ViewModelTest { ProbeViewModel(args: .init()) }
        let run = test.send(\.fail, ["kind": "server"])
        await test.settle()
        let expected = DomainError(kind: "server", code: 500, message: "probe failed (server)", detail: "probe failure", input: "fail")
        // The run fails without waiting: `loading` rises and falls in the turn, which a client never sees.
        test.expect([.failed(expected)])
        #expect(run.outcome == .failed(expected))
        await test.finish()
    }

    @Test func anAppFailureBecomesADomainErrorInTheViewModelsLocale() async {
        let test = ViewModelTest(locale: "de") { Failing() }
        let run = test.send(\.go)
        #expect(await run.finished() == .failed(DomainError(kind: "gone", code: 410, message: "Weg", detail: "the item is gone", input: "go")))
        _ = test.take()
        await test.finish()
    }

    @Test func cancellationIsNotAnError() async {
        let test = ViewModelTest { ProbeViewModel(args: .init()) }
        let run = test.send(\.fail, ["ms": 100])
        await test.settle()
        run.cancel()
        await test.advance(ms: 100)
        #expect(run.outcome == .cancelled)
        #expect(!test.take().contains { $0.outputName == "error" })
        await test.finish()
    }

    @Test func disabledReasonsAndInvalidValuesAreRefused() async {
        let test = ViewModelTest { ProbeViewModel(args: .init(start: -1)) }
        #expect(test.send(\.guarded).refusal == .disabled(reason: "count is negative"))
        #expect(
            test.execute("once", 5).refusal
                == .invalidValue(JSONDecodingError(path: "params.value", problem: "this input takes no value, got a number")))
        #expect(test.send("text") == .invalidValue(JSONDecodingError(path: "params.value", problem: "expected a string, got null")))
        await test.finish()
    }

    @Test func disposeCancelsWorkAndTimers() async {
        let test = ViewModelTest { ProbeViewModel(args: .init()) }
        let run = test.send(\.work, ["ms": 100])
        var fired = false
        test.context.schedule(after: .milliseconds(10)) { fired = true }
        await test.settle()
        test.context.dispose()
        #expect(run.outcome == .cancelled)
        await test.advance(ms: 1000)
        #expect(!fired)
        #expect(test.execute("once").refusal == .disabled(reason: "the view-model is disposed"))
        _ = test.take()
        await test.finish()
    }
}

/// Fails with an error of the app's own, in the app's own language.
@HostActor
final class Failing: ViewModel {
    static let kind = "Failing"
    struct Gone: DomainFailure {
        func domainError(in locale: AppLocale) -> DomainError {
            DomainError(kind: "gone", code: 410, message: locale.language == "de" ? "Weg" : "Gone", detail: "the item is gone")
        }
    }
    let go = Command(.ignore) { _ in throw Gone() }
}

@Suite("Manual clock")
@HostActor
struct ManualClockTests {
    @Test func timersFireInDeadlineOrderThenSchedulingOrder() {
        let clock = ManualClock()
        var fired: [String] = []
        clock.schedule(after: .milliseconds(20)) { fired.append("b@\(clock.now.milliseconds)") }
        clock.schedule(after: .milliseconds(10)) { fired.append("a@\(clock.now.milliseconds)") }
        clock.schedule(after: .milliseconds(20)) { fired.append("c@\(clock.now.milliseconds)") }
        let cancelled = clock.schedule(after: .milliseconds(5)) { fired.append("x") }
        clock.cancel(cancelled)
        clock.advance(by: .milliseconds(15))
        #expect(fired == ["a@10"])
        clock.advance(by: .milliseconds(100))
        #expect(fired == ["a@10", "b@20", "c@20"])
        #expect(clock.now == .milliseconds(115))
    }

    @Test func aTimerScheduledByATimerFiresInTheSameAdvanceWhenDue() {
        let clock = ManualClock()
        var ticks: [Int64] = []
        func tick() {
            ticks.append(clock.now.milliseconds)
            if ticks.count < 3 { clock.schedule(after: .seconds(1), tick) }
        }
        clock.schedule(after: .seconds(1), tick)
        clock.advance(by: .seconds(5))
        #expect(ticks == [1000, 2000, 3000])
    }

    @Test func sleepResumesWhenTheClockPassesAndThrowsWhenCancelled() async throws {
        let clock = ManualClock()
        var woke = false
        let task = Task { @HostActor in
            try await clock.sleep(for: .seconds(1))
            woke = true
        }
        await EventLoop.shared.settle()
        await clock.advance(by: .milliseconds(999))
        #expect(!woke)
        await clock.advance(by: .milliseconds(1))
        #expect(woke)
        try await task.value

        let cancelled = Task { @HostActor in try await clock.sleep(for: .seconds(1)) }
        await EventLoop.shared.settle()
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(clock.pendingCount == 0)
    }
}

/// The framework keeps only the matching rule of language tags; the tags are the app's.
@Suite("Locales")
struct LocaleTests {
    static let offered: [AppLocale] = ["de-CH", "de", "zh-Hans", "en"]

    @Test(arguments: [
        ("de-CH", "de-CH"), ("DE-ch", "de-CH"), ("de-CH-1996", "de-CH"), ("de-AT", "de"), ("de", "de"),
        ("zh", "zh-Hans"), ("zh-TW", "zh-Hans"), ("zh-Hant-TW", "zh-Hans"), ("en-GB", "en"), ("EN", "en"),
    ])
    func aTagPicksTheOfferedLocale(requested: String, picked: String) {
        #expect(AppLocale.match(requested, in: Self.offered)?.tag == picked)
    }

    @Test(arguments: ["fr", "en_US", "", "-", "de--CH", "toolongsubtag", "zh_CN"])
    func aTagOfAnotherLanguageOrMalformedPicksNone(requested: String) {
        #expect(AppLocale.match(requested, in: Self.offered) == nil)
    }

    @Test(arguments: [("zh-Hans", "zh"), ("DE-ch", "de"), ("EN", "en"), ("", ""), ("-x", ""), ("Ärger-x", "ärger")])
    func theLanguageIsTheFirstSubtagLowercased(tag: String, language: String) {
        #expect(AppLocale(tag).language == language)
    }

    @Test @HostActor func anAppThatSaysNothingOffersEnglish() {
        #expect(Host.Configuration(clock: ManualClock(), factories: []).locales == [.en])
    }
}
