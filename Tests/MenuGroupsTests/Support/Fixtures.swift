import Backend
import BackendTesting
import MenuGroups
import Testing
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
@_spi(Transport) import VMHostWire

/// The demo groups of menu `m1` and helpers shared by the menu-group tests.
enum Fixtures {
    static let demo = DemoCatalog.groups

    /// `groups` as the wire shows it.
    static func rows(_ groups: [MenuGroup]) -> JSON { .array(groups.map(\.json)) }

    /// A backend error as a command of a view-model in `locale` fails with it (its outcome, its
    /// `error` event, -32004): in that locale, with the failed input set.
    static func failure(_ error: BackendError, input: String, locale: AppLocale = .zhHans) -> DomainError {
        var failure = error.domainError(in: locale)
        failure.input = input
        return failure
    }

    /// ``failure(_:input:locale:)`` as the `error` event and -32004 carry it.
    static func error(_ error: BackendError, input: String, locale: AppLocale = .zhHans) -> JSON {
        failure(error, input: input, locale: locale).json
    }

    /// A context to make a view-model from JSON args in (the factories' argument checks).
    @HostActor
    static func context(kind: String) -> ViewModelContext {
        ViewModelContext(handle: "vm1", kind: kind, clock: ManualClock(), locale: .zhHans)
    }
}

/// A `MenuSubGroup` under test: Chinese texts, as the menu-group screens' users read them.
typealias SubGroupTest = ViewModelTest<MenuSubGroupViewModel>
/// A `MenuEditGroup` under test.
typealias EditGroupTest = ViewModelTest<MenuEditGroupViewModel>

@HostActor
extension ViewModelTest where VM == MenuSubGroupViewModel {
    /// A `MenuSubGroup` of `menuUid` on `api` (and `cache`), in Chinese, named `handle`.
    static func subGroup(
        api: any APIClient, menuUid: String = "m1", handle: String = "vm1", locale: AppLocale = .zhHans, clock: ManualClock = ManualClock(),
        cache: (any ListCache)? = nil
    ) -> SubGroupTest {
        ViewModelTest(locale: locale, clock: clock, handle: handle) {
            MenuSubGroupViewModel(args: .init(menuUid: menuUid), api: api, cache: cache)
        }
    }

    /// Loads the demo groups of menu `m1` and takes the records.
    func loadDemo(api: StubAPI, sourceLocation: SourceLocation = #_sourceLocation) async {
        api.answerNext(.groupsList, with: .success(.demoGroups))
        #expect(await execute("load").finished() == .succeeded(nil), sourceLocation: sourceLocation)
        _ = take()
    }
}

@HostActor
extension StubAPI {
    /// Fails the test when a call is still pending: for ``ViewModelTest/finish(also:sourceLocation:)``'s `also`.
    func verifyNothingPending(sourceLocation: SourceLocation) {
        let pending = pendingCalls
        guard !pending.isEmpty else { return }
        Issue.record(
            Comment(rawValue: "calls still pending: \(pending.map(\.description).joined(separator: "; "))"), sourceLocation: sourceLocation)
    }
}
