import Backend
import BackendTesting
@_spi(Transport) import VMHostEventLoop
import ProductList
import Testing
import VMHostRuntime
import VMHostTesting
@_spi(Transport) import VMHostWire

/// A product list under test on a ``StubAPI``: the test answers every fetch by hand and reads the
/// whole history of outputs.
@HostActor
final class ProductListHarness {
    typealias Record = ViewModelTest<ProductListViewModel>.Record

    let api: StubAPI
    /// The view-model under test, its outputs recorded in order.
    let recorder: ViewModelTest<ProductListViewModel>

    init(pageSize: Int = 20, locale: AppLocale = .zhHans, cache: (any ListCache)? = nil) {
        let api = StubAPI()
        self.api = api
        recorder = ViewModelTest(locale: locale) { ProductListViewModel(args: .init(pageSize: pageSize), api: api, cache: cache) }
    }

    /// Sends the command `command`: its run, or its refusal (``CommandRun/refusal``).
    @discardableResult
    func start(_ command: String, sourceLocation: SourceLocation = #_sourceLocation) -> CommandRun {
        recorder.execute(command, sourceLocation: sourceLocation)
    }

    /// The `occurrence`-th products call, answered with `reply`; returns the run's outcome once it
    /// ended and the work it caused has run.
    func answer(_ run: CommandRun, occurrence: Int, with reply: StubReply, sourceLocation: SourceLocation = #_sourceLocation) async -> CommandOutcome? {
        await api.call(.products, occurrence: occurrence).succeed(reply)
        return await run.finished(sourceLocation: sourceLocation)
    }

    /// The `occurrence`-th products call, failed with `error`; returns the run's outcome.
    func fail(_ run: CommandRun, occurrence: Int, with error: BackendError, sourceLocation: SourceLocation = #_sourceLocation) async -> CommandOutcome? {
        await api.call(.products, occurrence: occurrence).fail(error)
        return await run.finished(sourceLocation: sourceLocation)
    }

    /// Runs a refresh that the stub answers with demo page 1, and forgets its records.
    func loadFirstPage(sourceLocation: SourceLocation = #_sourceLocation) async {
        let run = start("refresh", sourceLocation: sourceLocation)
        let outcome = await answer(run, occurrence: api.calls(to: .products).count + 1, with: .demoProducts(page: 1), sourceLocation: sourceLocation)
        #expect(outcome == .succeeded(nil), sourceLocation: sourceLocation)
        _ = recorder.take()
    }

    /// Ends the test: every output asserted, nothing running or armed, no call left unanswered,
    /// and the view-model released once disposed.
    func finish(sourceLocation: SourceLocation = #_sourceLocation) async {
        let api = self.api
        await recorder.finish(also: [{ location in
            let pending = api.pendingCalls
            if !pending.isEmpty {
                Issue.record(Comment(rawValue: "calls still pending: \(pending.map(\.description).joined(separator: "; "))"), sourceLocation: location)
            }
        }], sourceLocation: sourceLocation)
    }
}

/// Expected values, written out independently of the view-model where it matters.
enum Expect {
    /// The cells of demo products `range` (1-based numbers), as JSON, in `locale`.
    static func cells(_ range: ClosedRange<Int>, locale: AppLocale = .zhHans) -> JSON {
        .array(range.map { JSONValueEncoder.encode(ProductCell(DemoCatalog.products[$0 - 1], locale: locale)) })
    }

    /// A page of the given demo products (1-based numbers) with its page info.
    static func page(_ numbers: [Int], index: Int, size: Int = 20, total: Int = 57) -> StubReply {
        .products(Page(items: numbers.map { DemoCatalog.products[$0 - 1] }, info: PageInfo(index: index, size: size, total: total)))
    }

    /// `error` as it fails the command `input` of a view-model in `locale`.
    static func failure(_ error: BackendError, input: String, locale: AppLocale = .zhHans) -> DomainError {
        var failure = error.domainError(in: locale)
        failure.input = input
        return failure
    }

    /// The error object of `error` after the runtime set its input.
    static func error(_ error: BackendError, input: String, locale: AppLocale = .zhHans) -> JSON {
        failure(error, input: input, locale: locale).json
    }
}
