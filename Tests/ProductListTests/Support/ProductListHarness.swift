import Backend
import BackendTesting
import VMHostEventLoop
import ProductList
import VMHostRuntime
import VMHostTesting
import VMHostWire

/// A product list on a recorder and a ``StubAPI``: the test answers every fetch by hand and reads
/// the whole history of outputs.
@HostActor
final class ProductListHarness {
    let api = StubAPI()
    let recorder: ViewModelRecorder
    let viewModel: ProductListViewModel

    init(pageSize: Int = 20, locale: AppLocale = .zhHans, cache: (any ListCache)? = nil) {
        recorder = ViewModelRecorder(kind: ProductListViewModel.kind, locale: locale)
        viewModel = recorder.keep(ProductListViewModel(args: .init(pageSize: pageSize), context: recorder.context, api: api, cache: cache))
    }

    /// Starts a command; returns the index of its outcome in `recorder.outcomes`.
    @discardableResult
    func start(_ command: String) throws(InputError) -> Int {
        try recorder.execute(command)
        return recorder.outcomes.count - 1
    }

    /// Waits until the command started as `index` has ended and the work it caused has run.
    ///
    /// A stub's answer resumes the fetch through the global executor before it comes back to the
    /// host thread, so settling alone could look too early: wait for the outcome itself.
    func outcome(_ index: Int) async -> CommandOutcome {
        while recorder.outcomes[index] == nil { await Task.yield() }
        await recorder.settle()
        return recorder.outcomes[index]!
    }

    /// Waits until `condition` holds, letting other work run: for effects that reach the host
    /// thread through the global executor (a stub call noticing its task was cancelled).
    func until(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
        await recorder.settle()
    }

    /// The `occurrence`-th products call, answered with `reply`; returns the command's outcome.
    func answer(_ index: Int, occurrence: Int, with reply: StubReply) async -> CommandOutcome {
        await api.call(.products, occurrence: occurrence).succeed(reply)
        return await outcome(index)
    }

    /// The `occurrence`-th products call, failed with `error`; returns the command's outcome.
    func fail(_ index: Int, occurrence: Int, with error: DomainError) async -> CommandOutcome {
        await api.call(.products, occurrence: occurrence).fail(error)
        return await outcome(index)
    }

    /// Runs a refresh that the stub answers with demo page 1, and forgets its records.
    func loadFirstPage() async {
        let index = try! start("refresh")
        _ = await answer(index, occurrence: api.calls(to: .products).count + 1, with: .demoProducts(page: 1))
        _ = recorder.take()
    }
}

/// Expected values, written out independently of the view-model where it matters.
enum Expect {
    /// The cells of demo products `range` (1-based numbers), as JSON, in `locale`.
    @HostActor
    static func cells(_ range: ClosedRange<Int>, locale: AppLocale = .zhHans) -> JSON {
        .array(range.map { ProductCell(DemoCatalog.products[$0 - 1], locale: locale).json })
    }

    /// A page of the given demo products (1-based numbers) with its page info.
    static func page(_ numbers: [Int], index: Int, size: Int = 20, total: Int = 57) -> StubReply {
        .products(Page(items: numbers.map { DemoCatalog.products[$0 - 1] }, info: PageInfo(index: index, size: size, total: total)))
    }

    /// The error object of `error` after the runtime set its input.
    static func error(_ error: DomainError, input: String, locale: AppLocale = .zhHans) -> JSON {
        error.reaching(input: input, locale: locale).json
    }
}
