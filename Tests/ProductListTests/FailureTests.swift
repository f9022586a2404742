import Backend
import BackendTesting
@_spi(Transport) import VMHostEventLoop
import ProductList
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire

extension ProductListSuites {
    /// Every failure kind, from either command, reaches the one `error` channel once, fails the command,
    /// keeps the list on screen and drops the flag it raised.
    @Suite(.timeLimit(.minutes(1)))
    @HostActor
    struct FailureTests {
        nonisolated static let failures: [BackendError] = [
            .network("could not connect to the server"),
            .timeout(),
            .server(status: 404),
            .server(status: 500),
            .business(code: "1009", message: "系统繁忙"),
            .decode("data[0].id is missing"),
        ]

        @Test(arguments: failures)
        func aFailedLoadMoreKeepsTheList(error: BackendError) async {
            let harness = ProductListHarness()
            await harness.loadFirstPage()
            let more = harness.start("loadMore")
            let expected = Expect.failure(error, input: "loadMore")
            #expect(await harness.fail(more, occurrence: 2, with: error) == .failed(expected))
            harness.recorder.expect([
                .changed("isLoadingMore", true), .changed("loadState", "loading"),
                .changed("lastError", Expect.error(error, input: "loadMore")),
                .changed("isLoadingMore", false), .changed("loadState", "failed"),
                .event("error", Expect.error(error, input: "loadMore")),
            ])
            #expect(harness.recorder.value("items") == Expect.cells(1...20))
            #expect(harness.recorder.value("page") == 1)
            #expect(harness.recorder.value("hasMore") == true)
            await harness.finish()
        }

        @Test(arguments: failures)
        func aFailedRefreshKeepsTheList(error: BackendError) async {
            let harness = ProductListHarness()
            await harness.loadFirstPage()
            let refresh = harness.start("refresh")
            let expected = Expect.failure(error, input: "refresh")
            #expect(await harness.fail(refresh, occurrence: 2, with: error) == .failed(expected))
            harness.recorder.expect([
                .changed("isRefreshing", true), .changed("loadState", "loading"),
                .changed("lastError", Expect.error(error, input: "refresh")),
                .changed("isRefreshing", false), .changed("loadState", "failed"),
                .event("error", Expect.error(error, input: "refresh")),
            ])
            #expect(harness.recorder.value("items") == Expect.cells(1...20))
            #expect(harness.recorder.value("page") == 1)
            await harness.finish()
        }

        @Test func aFailedFirstLoadLeavesTheListEmptyButNotMarkedEmpty() async {
            let harness = ProductListHarness()
            let refresh = harness.start("refresh")
            _ = await harness.fail(refresh, occurrence: 1, with: .network("offline"))
            harness.recorder.expect([
                .changed("isRefreshing", true), .changed("loadState", "loading"),
                .changed("lastError", Expect.error(.network("offline"), input: "refresh")),
                .changed("isRefreshing", false), .changed("loadState", "failed"),
                .event("error", Expect.error(.network("offline"), input: "refresh")),
            ])
            #expect(harness.recorder.value("isEmpty") == false)
            #expect(harness.recorder.value("page") == 0)
            await harness.finish()
        }

        @Test func bothCommandsFailIntoTheOneChannel() async {
            let harness = ProductListHarness()
            let refresh = harness.start("refresh")
            _ = await harness.fail(refresh, occurrence: 1, with: .server(status: 500))
            let more = harness.start("loadMore")
            _ = await harness.fail(more, occurrence: 2, with: .timeout())
            let events = harness.recorder.take().filter { $0.outputName == "error" }
            #expect(events == [
                .event("error", Expect.error(.server(status: 500), input: "refresh")),
                .event("error", Expect.error(.timeout(), input: "loadMore")),
            ])
            await harness.finish()
        }
    }
}
