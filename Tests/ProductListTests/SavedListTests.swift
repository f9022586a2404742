import Backend
import BackendTesting
import ProductList
import Testing
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
@_spi(Transport) import VMHostWire

extension ProductListSuites {
    /// The last good list (`--state-dir`, through ``ListCache``): saved after each load, shown at
    /// once by the next list of the same page size with `isStale` true, replaced by its first load.
    @Suite(.timeLimit(.minutes(1)))
    @HostActor
    struct SavedListTests {
        let cache = MemoryListCache()

        @Test func withoutACacheNothingIsStaleAndNothingSaved() async {
            let harness = ProductListHarness()
            #expect(harness.recorder.value("isStale") == false)
            await harness.loadFirstPage()
            #expect(harness.recorder.value("isStale") == false)
            #expect(cache.saves == 0)
            await harness.finish()
        }

        @Test func aLoadSavesTheFirstPagesAndTheNextListStartsWithThemStale() async {
            let first = ProductListHarness(cache: cache)
            #expect(first.recorder.value("isStale") == false)
            await first.loadFirstPage()
            let more = first.start("loadMore")
            #expect(await first.answer(more, occurrence: 2, with: .demoProducts(page: 2)) == .succeeded(nil))
            first.recorder.expect([
                .changed("isLoadingMore", true), .changed("loadState", "loading"),
                .changed("items", Expect.cells(1...40)),
                .changed("page", 2),
                .changed("isLoadingMore", false), .changed("loadState", "loaded"),
            ])
            #expect(cache.products[20] == SavedProductPages(
                products: Array(DemoCatalog.products[0..<40]), page: 2, hasMore: true))

            let second = ProductListHarness(cache: cache)
            let recorder = second.recorder
            #expect(recorder.value("items") == Expect.cells(1...40))
            #expect(recorder.value("page") == 2)
            #expect(recorder.value("hasMore") == true)
            #expect(recorder.value("isEmpty") == false)
            #expect(recorder.value("isStale") == true)
            #expect(recorder.value("loadState") == "loaded")
            #expect(recorder.value("lastError") == .null)
            recorder.expect([])

            let refresh = second.start("refresh")
            #expect(await second.answer(refresh, occurrence: 1, with: .demoProducts(page: 1)) == .succeeded(nil))
            recorder.expect([
                .changed("isRefreshing", true), .changed("loadState", "loading"),
                .changed("items", Expect.cells(1...20)),
                .changed("page", 1),
                .changed("isStale", false),
                .changed("isRefreshing", false), .changed("loadState", "loaded"),
            ])
            #expect(cache.products[20]?.page == 1)
            await first.finish()
            await second.finish()
        }

        @Test func aFailedRefreshKeepsTheStaleList() async {
            cache.products[20] = SavedProductPages(products: Array(DemoCatalog.products[0..<3]), page: 1, hasMore: false)
            let harness = ProductListHarness(cache: cache)
            let refresh = harness.start("refresh")
            _ = await harness.fail(refresh, occurrence: 1, with: .network("offline"))
            // Neither the items nor `isStale` change.
            harness.recorder.expect([
                .changed("isRefreshing", true), .changed("loadState", "loading"),
                .changed("lastError", Expect.error(.network("offline"), input: "refresh")),
                .changed("isRefreshing", false), .changed("loadState", "failed"),
                .event("error", Expect.error(.network("offline"), input: "refresh")),
            ])
            #expect(harness.recorder.value("items") == Expect.cells(1...3))
            #expect(harness.recorder.value("isStale") == true)
            #expect(harness.recorder.value("loadState") == "failed")
            await harness.finish()
        }

        @Test func aStaleListLoadsMoreFromPageOneAndReplaces() async {
            cache.products[20] = SavedProductPages(products: Array(DemoCatalog.products[0..<20]), page: 1, hasMore: true)
            let harness = ProductListHarness(cache: cache)
            let more = harness.start("loadMore")
            #expect(await harness.api.call(.products).arguments == ["page": 1, "pageSize": 20])
            #expect(await harness.answer(more, occurrence: 1, with: Expect.page([5, 6], index: 1, total: 2)) == .succeeded(nil))
            // The saved 20 are replaced, not appended to; the page stays 1.
            harness.recorder.expect([
                .changed("isLoadingMore", true), .changed("loadState", "loading"),
                .changed("items", Expect.cells(5...6)),
                .changed("hasMore", false),
                .changed("isStale", false),
                .changed("isLoadingMore", false), .changed("loadState", "loaded"),
            ])
            #expect(harness.recorder.value("items") == .array([5, 6].map { JSONValueEncoder.encode(ProductCell(DemoCatalog.products[$0 - 1], locale: .zhHans)) }))
            #expect(harness.recorder.value("isStale") == false)
            #expect(harness.recorder.value("hasMore") == false)
            await harness.finish()
        }

        @Test func pagesPastTheFifthLeaveTheSavedFirstFive() async {
            let harness = ProductListHarness(pageSize: 5, cache: cache)
            for number in 1...6 {
                let run = harness.start(number == 1 ? "refresh" : "loadMore")
                let items = Array((number - 1) * 5 + 1...number * 5)
                #expect(await harness.answer(run, occurrence: number, with: Expect.page(items, index: number, size: 5)) == .succeeded(nil))
            }
            #expect(harness.recorder.value("page") == 6)
            #expect(cache.products[5] == SavedProductPages(products: Array(DemoCatalog.products[0..<25]), page: 5, hasMore: true))
            #expect(cache.saves == 5)
            // The histories of paging are PagingTests'.
            _ = harness.recorder.take()
            await harness.finish()
        }

        @Test func aSavedEmptyListIsShownAsEmpty() async {
            cache.products[20] = SavedProductPages(products: [], page: 1, hasMore: false)
            let harness = ProductListHarness(cache: cache)
            #expect(harness.recorder.value("isEmpty") == true)
            #expect(harness.recorder.value("loadState") == "empty")
            #expect(harness.recorder.value("isStale") == true)
            await harness.finish()
        }

        @Test func theSavedProductsAreWrittenInTheListsLocale() async {
            cache.products[20] = SavedProductPages(products: Array(DemoCatalog.products[0..<2]), page: 1, hasMore: true)
            let harness = ProductListHarness(locale: .en, cache: cache)
            #expect(harness.recorder.value("items") == Expect.cells(1...2, locale: .en))
            await harness.finish()
        }
    }
}
