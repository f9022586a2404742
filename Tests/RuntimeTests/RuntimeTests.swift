import VMHostEventLoop
import VMHostTesting
import Testing
import VMHostWire
@testable import VMHostRuntime

@Suite("Properties and events")
@HostActor
struct PropertyTests {
    @Test func equalValuesAreNotReEmitted() {
        let recorder = ViewModelRecorder()
        let count = recorder.context.property("count", 0)
        count.value = 0
        count.value = 1
        count.value = 1
        count.value = 2
        #expect(recorder.take() == [.changed("count", 1), .changed("count", 2)])
    }

    @Test func deriveRecomputesOnlyWhenTheResultChanges() {
        let recorder = ViewModelRecorder()
        let a = recorder.context.property("a", "")
        let b = recorder.context.property("b", "")
        let valid = recorder.context.property("valid", false)
        derive(valid, from: [a, b]) { !a.value.isEmpty && !b.value.isEmpty }
        a.value = "x"
        a.value = "xy"
        b.value = "z"
        b.value = "zz"
        a.value = ""
        #expect(recorder.take() == [
            .changed("a", "x"), .changed("a", "xy"), .changed("b", "z"), .changed("valid", true),
            .changed("b", "zz"), .changed("a", ""), .changed("valid", false),
        ])
    }

    @Test func eventsAreEveryEmissionInOrder() {
        let recorder = ViewModelRecorder()
        let event = recorder.context.event("ping", of: Int.self)
        event.emit(1)
        event.emit(1)
        event.emit(2)
        #expect(recorder.take() == [.event("ping", 1), .event("ping", 1), .event("ping", 2)])
    }
}

@Suite("Commands")
@HostActor
struct CommandTests {
    func probe() -> (ViewModelRecorder, ProbeViewModel) {
        let recorder = ViewModelRecorder(kind: "Probe")
        let vm = recorder.keep(ProbeViewModel(args: .init(), context: recorder.context))
        _ = recorder.take()
        return (recorder, vm)
    }

    @Test func aCommandRunsAndReportsItsResult() async throws {
        let (recorder, vm) = probe()
        try recorder.execute("work", ["ms": 50])
        #expect(recorder.take() == [.changed("busy", true)])
        await recorder.settle()
        #expect(recorder.take() == [.changed("loading", true)])
        await recorder.advance(ms: 50)
        #expect(recorder.take() == [.changed("loading", false), .changed("count", 1), .changed("busy", false)])
        #expect(recorder.outcomes == [.succeeded(1)])
        #expect(vm.context.activity.count == 0)
    }

    @Test func latestCancelsTheRunningExecutionAndAppliesNothingOfIt() async throws {
        let (recorder, _) = probe()
        try recorder.execute("work", ["ms": 100])
        await recorder.settle()
        await recorder.advance(ms: 50)
        try recorder.execute("work", ["ms": 100])
        #expect(recorder.outcomes[0] == .cancelled)
        await recorder.settle()
        await recorder.advance(ms: 100)
        #expect(recorder.outcomes == [.cancelled, .succeeded(1)])
        #expect(recorder.value("count") == 1)
        #expect(recorder.value("busy") == false)
        #expect(recorder.value("loading") == false)
    }

    @Test func ignoreRefusesWhileRunningWithAReason() async throws {
        let (recorder, _) = probe()
        try recorder.execute("once")
        #expect(throws: InputError.disabled(reason: "already running")) { try recorder.execute("once") }
        await recorder.settle()
        await recorder.advance(ms: 100)
        #expect(recorder.outcomes == [.succeeded("done"), nil])
        try recorder.execute("once")
        await recorder.settle()
        await recorder.advance(ms: 100)
        #expect(recorder.outcomes.last == .succeeded("done"))
    }

    @Test func ignorePerKeyRefusesOnlyTheSameKey() async throws {
        let (recorder, _) = probe()
        try recorder.execute("perKey", ["key": "g1"])
        try recorder.execute("perKey", ["key": "g2"])
        #expect(throws: InputError.disabled(reason: "already running for g1")) { try recorder.execute("perKey", ["key": "g1"]) }
        await recorder.settle()
        await recorder.advance(ms: 100)
        #expect(recorder.outcomes == [.succeeded("g1"), .succeeded("g2"), nil])
    }

    @Test func concurrentRunsSideBySideAndActivityCountsEveryRun() async throws {
        let (recorder, vm) = probe()
        try recorder.execute("parallel", ["ms": 100])
        try recorder.execute("parallel", ["ms": 200])
        await recorder.settle()
        #expect(vm.context.activity.count == 2)
        await recorder.advance(ms: 100)
        #expect(vm.loading.value == true)
        await recorder.advance(ms: 100)
        #expect(vm.loading.value == false)
        #expect(recorder.take() == [.changed("loading", true), .changed("loading", false)])
        #expect(recorder.outcomes == [.succeeded(100), .succeeded(200)])
    }

    @Test func aDomainFailureIsOneErrorEventTaggedWithTheInput() async throws {
        let (recorder, _) = probe()
        try recorder.execute("fail", ["kind": "server"])
        await recorder.settle()
        let expected = DomainError(kind: .server, code: 500, detail: "probe failure", input: "fail")
        #expect(recorder.take() == [.event("error", expected.json)])
        #expect(recorder.outcomes == [.failed(expected)])
        #expect(expected.json["message"] == "服务器错误（500），请稍后重试")
        #expect(expected.json["detail"] == "probe failure")
    }

    @Test func cancellationIsNotAnError() async throws {
        let (recorder, _) = probe()
        let execution = try recorder.execute("fail", ["ms": 100])
        await recorder.settle()
        execution.cancel()
        await recorder.advance(ms: 100)
        #expect(recorder.outcomes == [.cancelled])
        #expect(!recorder.take().contains { if case .event = $0 { true } else { false } })
    }

    @Test func disabledReasonsAndInvalidValuesAreRefused() throws {
        let (recorder, vm) = probe()
        vm.count.value = -1
        #expect(throws: InputError.disabled(reason: "count is negative")) { try recorder.execute("guarded") }
        #expect(throws: InputError.invalidValue(JSONDecodingError(path: "params.value", problem: "this input takes no value, got a number"))) {
            try recorder.execute("once", 5)
        }
        #expect(throws: InputError.invalidValue(JSONDecodingError(path: "params.value", problem: "expected a string, got null"))) {
            try recorder.send("text")
        }
    }

    @Test func disposeCancelsWorkAndTimers() async throws {
        let (recorder, vm) = probe()
        try recorder.execute("work", ["ms": 100])
        var fired = false
        vm.context.schedule(after: .milliseconds(10)) { fired = true }
        await recorder.settle()
        vm.context.dispose()
        #expect(recorder.outcomes == [.cancelled])
        await recorder.advance(ms: 1000)
        #expect(!fired)
        #expect(vm.count.value == 0)
        #expect(throws: InputError.disabled(reason: "the view-model is disposed")) { try recorder.execute("once") }
    }
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
    }
}

/// The error object: a user-facing `message` per kind in the view-model's locale, and a `detail`
/// for developers.
@Suite struct DomainErrorMessageTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var error: DomainError
        var zh: String
        var en: String
        var testDescription: String { error.description }
    }

    static let rows: [Row] = [
        Row(error: .network("could not connect to the server"), zh: "网络连接失败，请检查网络后重试", en: "No connection. Check your network and try again."),
        Row(error: .timeout(), zh: "请求超时，请稍后重试", en: "The request timed out. Please try again."),
        Row(error: .server(status: 503), zh: "服务器错误（503），请稍后重试", en: "Server error (503). Please try again later."),
        Row(error: .decode("envelope.success: expected a boolean, got a string"), zh: "服务器返回的数据无法识别，请稍后重试", en: "The server's answer could not be read. Please try again later."),
        Row(error: .business(code: "1001", message: "用户名或密码错误"), zh: "用户名或密码错误", en: "用户名或密码错误"),
        Row(error: .business(code: "1", message: ""), zh: "操作失败，请稍后重试", en: "The request failed. Please try again."),
        Row(error: .business(code: "1", message: "  "), zh: "操作失败，请稍后重试", en: "The request failed. Please try again."),
    ]

    @Test(arguments: rows) func theMessageIsWrittenForTheUserInTheLocale(row: Row) {
        #expect(row.error.reaching(input: "load", locale: .zhHans).message == row.zh)
        #expect(row.error.reaching(input: "load", locale: .en).message == row.en)
    }

    @Test(arguments: rows) func theWireObjectCarriesMessageAndDetail(row: Row) {
        let json = row.error.reaching(input: "load", locale: .en).json
        guard case .object(let object) = json else { Issue.record("not an object"); return }
        #expect(object.keys == ["kind", "code", "message", "detail", "input"])
        #expect(object["message"] == .string(row.en))
        #expect(object["detail"] == .string(row.error.detail))
        #expect(object["input"] == "load")
    }

    @Test func theDetailNamesWhatFailedWithoutTheServersText() {
        let business = DomainError.business(code: "1001", message: "用户名或密码错误")
        #expect(business.detail == #"the server reported failure code "1001""#)
        #expect(!business.detail.contains("用户名"))
        #expect(DomainError.server(status: 500).detail == "the server answered HTTP 500")
    }
}
