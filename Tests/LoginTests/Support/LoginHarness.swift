import Backend
import Testing
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
@_spi(Transport) import VMHostWire
@testable import Login

/// What a Login test records: a property's new value or an event.
typealias LoginRecord = ViewModelTest<LoginViewModel>.Record

/// A Login view-model under test on a manual clock, over the real embedded backend
/// (account 13800138000 / 123456, SMS code 123456), for tests that assert whole output histories.
@HostActor
final class LoginHarness {
    /// The view-model under test (read it as `recorder.viewModel`).
    let recorder: ViewModelTest<LoginViewModel>
    let backend: EmbeddedBackend

    init(mode: LoginMode = .password, locale: AppLocale = .zhHans) {
        let clock = ManualClock()
        let backend = EmbeddedBackend(clock: clock)
        self.backend = backend
        recorder = ViewModelTest(locale: locale, clock: clock) { LoginViewModel(args: LoginArgs(mode: mode), api: backend) }
    }

    /// Sends a value input and returns what it changed; a refused send fails the test here.
    func send(_ input: String, _ value: JSON, sourceLocation: SourceLocation = #_sourceLocation) -> [LoginRecord] {
        if let refusal = recorder.send(input, value, sourceLocation: sourceLocation) {
            Issue.record("\(input) was refused: \(refusal)", sourceLocation: sourceLocation)
        }
        return recorder.take()
    }

    /// Fills fields without asserting their history (for tests about what comes after); a refused
    /// send fails the test here.
    func fill(_ fields: [(String, String)], sourceLocation: SourceLocation = #_sourceLocation) {
        for (input, text) in fields { _ = send(input, .string(text), sourceLocation: sourceLocation) }
    }

    /// Sends the command `name`: its run; a refused send fails the test here.
    @discardableResult
    func execute(_ name: String, _ value: JSON = .null, sourceLocation: SourceLocation = #_sourceLocation) -> CommandRun {
        recorder.execute(name, value, sourceLocation: sourceLocation).accepted(sourceLocation: sourceLocation)
    }

    /// Moves the clock and returns what the elapsed time changed.
    func advance(ms: Int) async -> [LoginRecord] {
        await recorder.advance(ms: ms)
        return recorder.take()
    }
}

extension CommandRun {
    /// This run, after failing the test here when its send was refused (as a thrown refusal did).
    @discardableResult
    func accepted(sourceLocation: SourceLocation = #_sourceLocation) -> CommandRun {
        if let refusal { Issue.record("\(name) was refused: \(refusal)", sourceLocation: sourceLocation) }
        return self
    }
}

/// Records written compactly: `changed("countdown", 59)`.
func changed(_ name: String, _ value: JSON) -> LoginRecord { .changed(name, value) }
func event(_ name: String, _ value: JSON) -> LoginRecord { .event(name, value) }

/// `error` as a command `input` fails with it on the wire, its message in `locale`.
func domainError(_ error: BackendError, input: String, locale: AppLocale = .zhHans) -> DomainError {
    var failure = error.domainError(in: locale)
    failure.input = input
    return failure
}

/// The demo account and code of the embedded backend.
enum Demo {
    static let account = "13800138000"
    static let password = "123456"
    static let phone = "13912345678"
    static let code = "123456"
}
