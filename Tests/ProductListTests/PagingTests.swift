import Backend
import BackendTesting
@_spi(Transport) import VMHostEventLoop
import ProductList
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire

extension ProductListSuites {
    /// Refresh, load more and their outputs, asserted as whole histories against a stub API.
    @Suite(.timeLimit(.minutes(1)))
    @HostActor
    struct PagingTests {
        let harness = ProductListHarness()
        var recorder: ViewModelTest<ProductListViewModel> { harness.recorder }

        @Test func startsEmptyWithMorePagesToLoad() async {
            #expect(recorder.value("items") == [])
            #expect(recorder.value("page") == 0)
            #expect(recorder.value("hasMore") == true)
            #expect(recorder.value("isRefreshing") == false)
            #expect(recorder.value("isLoadingMore") == false)
            #expect(recorder.value("isEmpty") == false)
            recorder.expect([])
            await harness.finish()
        }

        @Test func firstLoad() async {
            let refresh = harness.start("refresh")
            recorder.expect([.changed("isRefreshing", true), .changed("loadState", "loading")])
            let call = await harness.api.call(.products)
            #expect(call.arguments == ["page": 1, "pageSize": 20])

            #expect(await harness.answer(refresh, occurrence: 1, with: .demoProducts(page: 1)) == .succeeded(nil))
            recorder.expect([
                .changed("items", Expect.cells(1...20)),
                .changed("page", 1),
                .changed("isRefreshing", false), .changed("loadState", "loaded"),
            ])
            #expect(harness.api.calls.count == 1)
            await harness.finish()
        }

        @Test func threePagesToTheEnd() async {
            await harness.loadFirstPage()

            let second = harness.start("loadMore")
            recorder.expect([.changed("isLoadingMore", true), .changed("loadState", "loading")])
            #expect(await harness.api.call(.products, occurrence: 2).arguments == ["page": 2, "pageSize": 20])
            #expect(await harness.answer(second, occurrence: 2, with: .demoProducts(page: 2)) == .succeeded(nil))
            recorder.expect([
                .changed("items", Expect.cells(1...40)),
                .changed("page", 2),
                .changed("isLoadingMore", false), .changed("loadState", "loaded"),
            ])

            let third = harness.start("loadMore")
            #expect(await harness.api.call(.products, occurrence: 3).arguments == ["page": 3, "pageSize": 20])
            #expect(await harness.answer(third, occurrence: 3, with: .demoProducts(page: 3)) == .succeeded(nil))
            recorder.expect([
                .changed("isLoadingMore", true), .changed("loadState", "loading"),
                .changed("items", Expect.cells(1...57)),
                .changed("page", 3),
                .changed("hasMore", false),
                .changed("isLoadingMore", false), .changed("loadState", "loaded"),
            ])

            #expect(harness.start("loadMore").refusal == .disabled(reason: "no more pages"))
            recorder.expect([])
            #expect(harness.api.calls.count == 3)
            await harness.finish()
        }

        @Test func loadMoreBeforeAnyRefreshLoadsPageOne() async {
            let run = harness.start("loadMore")
            #expect(await harness.api.call(.products).arguments == ["page": 1, "pageSize": 20])
            #expect(await harness.answer(run, occurrence: 1, with: .demoProducts(page: 1)) == .succeeded(nil))
            recorder.expect([
                .changed("isLoadingMore", true), .changed("loadState", "loading"),
                .changed("items", Expect.cells(1...20)),
                .changed("page", 1),
                .changed("isLoadingMore", false), .changed("loadState", "loaded"),
            ])
            await harness.finish()
        }

        @Test func refreshReplacesTheItemsAndStartsOverAtPageOne() async {
            await harness.loadFirstPage()
            let more = harness.start("loadMore")
            _ = await harness.answer(more, occurrence: 2, with: .demoProducts(page: 2))
            _ = recorder.take()

            // The server's first page changed meanwhile: two new products at the top.
            let refresh = harness.start("refresh")
            #expect(await harness.api.call(.products, occurrence: 3).arguments == ["page": 1, "pageSize": 20])
            let shifted = Expect.page([56, 57] + Array(1...18), index: 1)
            #expect(await harness.answer(refresh, occurrence: 3, with: shifted) == .succeeded(nil))
            recorder.expect([
                .changed("isRefreshing", true), .changed("loadState", "loading"),
                .changed("items", .array(Expect.cells(56...57).arrayValue! + Expect.cells(1...18).arrayValue!)),
                .changed("page", 1),
                .changed("isRefreshing", false), .changed("loadState", "loaded"),
            ])

            // After a refresh, ids of the old list no longer count as listed: page 2 appends p019…p038.
            let next = harness.start("loadMore")
            #expect(await harness.answer(next, occurrence: 4, with: Expect.page(Array(19...38), index: 2)) == .succeeded(nil))
            recorder.expect([
                .changed("isLoadingMore", true), .changed("loadState", "loading"),
                .changed("items", .array(Expect.cells(56...57).arrayValue! + Expect.cells(1...38).arrayValue!)),
                .changed("page", 2),
                .changed("isLoadingMore", false), .changed("loadState", "loaded"),
            ])
            await harness.finish()
        }

        @Test func noDuplicateIdsWhenTheServerShiftsItemsOntoTheNextPage() async {
            await harness.loadFirstPage()
            // A product was inserted on the server: p019 and p020 moved onto page 2.
            let more = harness.start("loadMore")
            #expect(await harness.answer(more, occurrence: 2, with: Expect.page(Array(19...38), index: 2)) == .succeeded(nil))
            recorder.expect([
                .changed("isLoadingMore", true), .changed("loadState", "loading"),
                .changed("items", Expect.cells(1...38)),
                .changed("page", 2),
                .changed("isLoadingMore", false), .changed("loadState", "loaded"),
            ])
            await harness.finish()
        }

        @Test func aPageWithOnlyKnownIdsStillAdvancesThePage() async {
            await harness.loadFirstPage()
            let more = harness.start("loadMore")
            #expect(await harness.answer(more, occurrence: 2, with: Expect.page(Array(1...20), index: 2)) == .succeeded(nil))
            recorder.expect([.changed("isLoadingMore", true), .changed("loadState", "loading"), .changed("page", 2), .changed("isLoadingMore", false), .changed("loadState", "loaded")])
            await harness.finish()
        }

        @Test func pageAdvancesOnlyOnSuccess() async {
            await harness.loadFirstPage()
            let failed = harness.start("loadMore")
            _ = await harness.fail(failed, occurrence: 2, with: .network("offline"))
            #expect(recorder.value("page") == 1)
            _ = recorder.take()

            let retry = harness.start("loadMore")
            #expect(await harness.api.call(.products, occurrence: 3).arguments == ["page": 2, "pageSize": 20])
            #expect(await harness.answer(retry, occurrence: 3, with: .demoProducts(page: 2)) == .succeeded(nil))
            recorder.expect([
                .changed("isLoadingMore", true), .changed("loadState", "loading"),
                .changed("items", Expect.cells(1...40)),
                .changed("page", 2),
                // The success clears the failure a late subscriber would otherwise still read.
                .changed("lastError", .null),
                .changed("isLoadingMore", false), .changed("loadState", "loaded"),
            ])
            await harness.finish()
        }

        @Test func anEmptyListIsEmptyOnlyOnceLoaded() async {
            let refresh = harness.start("refresh")
            let empty = StubReply.products(Page(items: [], info: PageInfo(index: 1, size: 20, total: 0)))
            #expect(await harness.answer(refresh, occurrence: 1, with: empty) == .succeeded(nil))
            recorder.expect([
                .changed("isRefreshing", true), .changed("loadState", "loading"),
                .changed("page", 1),
                .changed("hasMore", false),
                .changed("isEmpty", true),
                .changed("isRefreshing", false), .changed("loadState", "empty"),
            ])

            // Products appeared: the next refresh fills the list and it is no longer empty.
            let again = harness.start("refresh")
            #expect(await harness.answer(again, occurrence: 2, with: .demoProducts(page: 1)) == .succeeded(nil))
            recorder.expect([
                .changed("isRefreshing", true), .changed("loadState", "loading"),
                .changed("items", Expect.cells(1...20)),
                .changed("hasMore", true),
                .changed("isEmpty", false),
                .changed("isRefreshing", false), .changed("loadState", "loaded"),
            ])
            await harness.finish()
        }

        @Test func loadMoreIsRefusedWhileAFetchRuns() async {
            let refresh = harness.start("refresh")
            #expect(harness.start("loadMore").refusal == .disabled(reason: "a fetch is in flight"))
            _ = await harness.answer(refresh, occurrence: 1, with: .demoProducts(page: 1))

            let more = harness.start("loadMore")
            // The runtime's `ignore` policy answers first while the load-more itself runs.
            #expect(harness.start("loadMore").refusal == .disabled(reason: "already running"))
            _ = await harness.answer(more, occurrence: 2, with: .demoProducts(page: 2))
            recorder.expect([
                .changed("isRefreshing", true), .changed("loadState", "loading"),
                .changed("items", Expect.cells(1...20)),
                .changed("page", 1),
                .changed("isRefreshing", false), .changed("loadState", "loaded"),
                .changed("isLoadingMore", true), .changed("loadState", "loading"),
                .changed("items", Expect.cells(1...40)),
                .changed("page", 2),
                .changed("isLoadingMore", false), .changed("loadState", "loaded"),
            ])
            #expect(harness.api.calls.count == 2)
            await harness.finish()
        }

        @Test func aSecondRefreshReplacesTheFirst() async {
            let first = harness.start("refresh")
            let second = harness.start("refresh")
            #expect(first.outcome == .cancelled)
            let firstCall = await harness.api.call(.products)
            await recorder.until("the first refresh's fetch to be cancelled") { !firstCall.isPending }
            #expect(firstCall.wasCancelled)
            #expect(await harness.answer(second, occurrence: 2, with: .demoProducts(page: 1)) == .succeeded(nil))
            // isExecuting drops and rises again inside the second send: one turn, in which a client
            // sees no change.
            recorder.expect([
                .changed("isRefreshing", true), .changed("loadState", "loading"),
                .changed("items", Expect.cells(1...20)),
                .changed("page", 1),
                .changed("isRefreshing", false), .changed("loadState", "loaded"),
            ])
            await harness.finish()
        }

        @Test func theConfiguredPageSizeIsAskedFor() async {
            let harness = ProductListHarness(pageSize: 50)
            let refresh = harness.start("refresh")
            #expect(await harness.api.call(.products).arguments == ["page": 1, "pageSize": 50])
            #expect(await harness.answer(refresh, occurrence: 1, with: .demoProducts(page: 1, pageSize: 50)) == .succeeded(nil))
            let more = harness.start("loadMore")
            #expect(await harness.api.call(.products, occurrence: 2).arguments == ["page": 2, "pageSize": 50])
            #expect(await harness.answer(more, occurrence: 2, with: .demoProducts(page: 2, pageSize: 50)) == .succeeded(nil))
            harness.recorder.expect([
                .changed("isRefreshing", true), .changed("loadState", "loading"),
                .changed("items", Expect.cells(1...50)),
                .changed("page", 1),
                .changed("isRefreshing", false), .changed("loadState", "loaded"),
                .changed("isLoadingMore", true), .changed("loadState", "loading"),
                .changed("items", Expect.cells(1...57)),
                .changed("page", 2),
                .changed("hasMore", false),
                .changed("isLoadingMore", false), .changed("loadState", "loaded"),
            ])
            await harness.finish()
        }
    }
}
