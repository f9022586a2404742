import Backend
import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import VMHostWire
@testable import Login

/// A Login view-model on a recording context with a manual clock, over the real embedded backend
/// (account 13800138000 / 123456, SMS code 123456), for tests that assert whole output histories.
@HostActor
final class LoginHarness {
    let recorder: ViewModelRecorder
    let backend: EmbeddedBackend
    let viewModel: LoginViewModel

    init(mode: LoginMode = .password, locale: AppLocale = .zhHans) {
        recorder = ViewModelRecorder(kind: LoginViewModel.kind, locale: locale)
        backend = EmbeddedBackend(clock: recorder.clock)
        viewModel = recorder.keep(LoginViewModel(args: LoginArgs(mode: mode), context: recorder.context, api: backend))
    }

    /// Sends a value input and returns what it changed.
    func send(_ input: String, _ value: JSON) throws(InputError) -> [ViewModelRecorder.Record] {
        try recorder.send(input, value)
        return recorder.take()
    }

    /// Fills fields without asserting their history (for tests about what comes after).
    func fill(_ fields: [(String, String)]) throws(InputError) {
        for (input, text) in fields { try recorder.send(input, .string(text)) }
        _ = recorder.take()
    }

    /// Moves the clock and returns what the elapsed time changed.
    func advance(ms: Int) async -> [ViewModelRecorder.Record] {
        await recorder.advance(ms: ms)
        return recorder.take()
    }
}

/// Records written compactly: `changed("countdown", 59)`.
func changed(_ name: String, _ value: JSON) -> ViewModelRecorder.Record { .changed(name, value) }
func event(_ name: String, _ value: JSON) -> ViewModelRecorder.Record { .event(name, value) }

/// The demo account and code of the embedded backend.
enum Demo {
    static let account = "13800138000"
    static let password = "123456"
    static let phone = "13912345678"
    static let code = "123456"
}
