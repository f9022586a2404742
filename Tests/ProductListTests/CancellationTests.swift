import Backend
import BackendTesting
@_spi(Transport) import VMHostEventLoop
import ProductList
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire

extension ProductListSuites {
    /// The `cancel` input and a refresh during load-more, against a stub API: the fetch is cancelled
    /// for real, the command ends as cancelled, the flags drop, nothing of the fetch is applied, and no
    /// error is emitted. (`$/cancelRequest` and `vm.dispose` are in `WireCancellationTests`.)
    @Suite(.timeLimit(.minutes(1)))
    @HostActor
    struct CancellationTests {
        let harness = ProductListHarness()
        var recorder: ViewModelTest<ProductListViewModel> { harness.recorder }

        @Test func cancelStopsARefresh() async {
            let refresh = harness.start("refresh")
            let call = await harness.api.call(.products)
            #expect(recorder.send("cancel") == nil)
            #expect(refresh.outcome == .cancelled)
            // The fetch's task was cancelled: the stub sees it (once its task gets there).
            await recorder.until("the fetch to be cancelled") { !call.isPending }
            #expect(call.wasCancelled)
            // The server answering late changes nothing.
            #expect(!call.succeed(.demoProducts(page: 1)))
            await recorder.settle()
            // A cancelled first load goes back to idle, with no error.
            recorder.expect([
                .changed("isRefreshing", true), .changed("loadState", "loading"),
                .changed("isRefreshing", false), .changed("loadState", "idle"),
            ])
            #expect(recorder.value("page") == 0)
            #expect(recorder.value("lastError") == .null)
            await harness.finish()
        }

        @Test func cancelStopsALoadMoreAndKeepsTheList() async {
            await harness.loadFirstPage()
            let more = harness.start("loadMore")
            let call = await harness.api.call(.products, occurrence: 2)
            #expect(recorder.send("cancel") == nil)
            #expect(more.outcome == .cancelled)
            await recorder.until("the fetch to be cancelled") { !call.isPending }
            #expect(call.wasCancelled)
            #expect(!call.succeed(.demoProducts(page: 2)))
            await recorder.settle()
            recorder.expect([
                .changed("isLoadingMore", true), .changed("loadState", "loading"),
                .changed("isLoadingMore", false), .changed("loadState", "loaded"),
            ])
            #expect(recorder.value("items") == Expect.cells(1...20))
            #expect(recorder.value("page") == 1)

            // The same page is asked for again next time.
            let retry = harness.start("loadMore")
            #expect(await harness.api.call(.products, occurrence: 3).arguments == ["page": 2, "pageSize": 20])
            #expect(await harness.answer(retry, occurrence: 3, with: .demoProducts(page: 2)) == .succeeded(nil))
            recorder.expect([
                .changed("isLoadingMore", true), .changed("loadState", "loading"),
                .changed("items", Expect.cells(1...40)),
                .changed("page", 2),
                .changed("isLoadingMore", false), .changed("loadState", "loaded"),
            ])
            await harness.finish()
        }

        @Test func cancelWithNothingInFlightDoesNothing() async {
            #expect(recorder.send("cancel") == nil)
            recorder.expect([])
            #expect(harness.api.calls.isEmpty)
            await harness.finish()
        }

        @Test func refreshDuringLoadMoreCancelsTheLoadMore() async {
            await harness.loadFirstPage()
            let more = harness.start("loadMore")
            let moreCall = await harness.api.call(.products, occurrence: 2)
            let refresh = harness.start("refresh")
            // Cancelled as the refresh starts, before it fetches: the two spinners never show together.
            #expect(more.outcome == .cancelled)
            await recorder.until("the load-more's fetch to be cancelled") { !moreCall.isPending }
            #expect(moreCall.wasCancelled)
            recorder.expect([
                .changed("isLoadingMore", true), .changed("loadState", "loading"),
                // Still loading: the refresh starts in the same turn.
                .changed("isLoadingMore", false),
                .changed("isRefreshing", true),
            ])

            // The load-more's page arriving late is not appended to the refreshed list.
            #expect(!moreCall.succeed(.demoProducts(page: 2)))
            let refreshCall = await harness.api.call(.products, occurrence: 3)
            #expect(refreshCall.arguments == ["page": 1, "pageSize": 20])
            let fresh = Expect.page(Array(3...22), index: 1)
            #expect(await harness.answer(refresh, occurrence: 3, with: fresh) == .succeeded(nil))
            recorder.expect([
                .changed("items", Expect.cells(3...22)),
                .changed("isRefreshing", false), .changed("loadState", "loaded"),
            ])
            #expect(recorder.value("page") == 1)
            await harness.finish()
        }
    }
}
