import Backend
import BackendTesting
import VMHostEventLoop
import MenuGroups
import VMHostRuntime
import VMHostTesting
import VMHostWire

/// The demo groups of menu `m1` and helpers shared by the menu-group tests.
enum Fixtures {
    static let demo = DemoCatalog.groups

    /// `groups` as the wire shows it.
    static func rows(_ groups: [MenuGroup]) -> JSON { .array(groups.map(\.json)) }

    /// A domain error as the `error` event and -32004 carry it: with the failed input set.
    static func error(_ error: DomainError, input: String, locale: AppLocale = .zhHans) -> JSON {
        error.reaching(input: input, locale: locale).json
    }
}

/// Keeps view-models alive for the length of a test: the host's registry does that in production,
/// and a view-model's inputs hold it `unowned`.
@HostActor
final class Keeper {
    private var objects: [AnyObject] = []

    @discardableResult
    func keep<T: AnyObject>(_ object: T) -> T {
        objects.append(object)
        return object
    }
}

@HostActor
extension ViewModelRecorder {
    /// A `MenuSubGroup` on menu `m1` whose groups are loaded (demo data) and whose records are taken.
    @discardableResult
    func loadedSubGroup(api: StubAPI, keeper: Keeper) async throws -> MenuSubGroupViewModel {
        let viewModel = keeper.keep(keep(MenuSubGroupViewModel(args: .init(menuUid: "m1"), context: context, api: api)))
        api.answerNext(.groupsList, with: .success(.demoGroups))
        try execute("load")
        await finished(outcomes.count - 1)
        _ = take()
        return viewModel
    }
}
