import Backend
import BackendTesting
@_spi(Transport) import VMHostEventLoop
import ProductList
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire

extension ProductListSuites {
    /// Every error kind at every point where `refresh` and `loadMore` call the backend, with and
    /// without pages loaded before: the flag drops, one `error` reports it, the list and its page
    /// info stay as they were, `loadMore` is enabled exactly as before, and the same command run again
    /// against a backend that answers recovers fully.
    @Suite(.timeLimit(.minutes(1)))
    @HostActor
    struct FaultMatrixTests {
        /// One failure of each kind.
        nonisolated static let kinds: [BackendError] = [
            .network("could not connect to the server"),
            .timeout(),
            .server(status: 503),
            .business(code: "1009", message: "系统繁忙"),
            .decode("data[0].id is missing"),
        ]

        /// Where the failing fetch comes: the command, and what the list went through before it.
        enum Point: String, CaseIterable, Sendable, CustomTestStringConvertible {
            /// The first fetch of all (call 1).
            case refreshFirst
            /// Page 1 is listed (call 2).
            case refreshAfterPage1
            /// Pages 1 and 2 are listed: a refresh failing after a successful load-more (call 3).
            case refreshAfterLoadMore
            /// All three pages are listed, `hasMore` is false (call 4).
            case refreshAtTheEnd
            /// Page 1 is listed and a load-more is in flight: the refresh cancels it, then fails (call 3).
            case refreshOverLoadMore
            /// Nothing loaded yet: the load-more loads page 1 (call 1).
            case loadMoreFirst
            /// Page 1 is listed: page 2 fails (call 2).
            case loadMoreAfterPage1
            /// Pages 1 and 2 are listed: page 3 fails (call 3).
            case loadMoreAfterPage2
            /// Page 1 is listed and page 2 failed once already: the retry of page 2 fails too (call 3).
            case loadMoreRetry

            var testDescription: String { rawValue }

            var command: String { rawValue.hasPrefix("refresh") ? "refresh" : "loadMore" }
            var flag: String { command == "refresh" ? "isRefreshing" : "isLoadingMore" }

            /// The pages loaded successfully before the failing command.
            var pagesBefore: Int {
                switch self {
                case .refreshFirst, .loadMoreFirst: 0
                case .refreshAfterPage1, .refreshOverLoadMore, .loadMoreAfterPage1, .loadMoreRetry: 1
                case .refreshAfterLoadMore, .loadMoreAfterPage2: 2
                case .refreshAtTheEnd: 3
                }
            }

            /// The page the failing command asks for (and its retry again).
            var requestedPage: Int { command == "refresh" ? 1 : pagesBefore + 1 }
        }

        /// The data outputs and both flags, compared as a whole.
        struct Snapshot: Equatable, CustomStringConvertible {
            var values: [String: JSON]

            @HostActor
            init(_ recorder: ViewModelTest<ProductListViewModel>) {
                values = Dictionary(uniqueKeysWithValues: ["items", "page", "hasMore", "isEmpty", "isRefreshing", "isLoadingMore"].map {
                    ($0, recorder.value($0) ?? nil)
                })
            }

            /// What the list shows once demo pages `1...pages` are loaded, no fetch running.
            @HostActor
            init(pages: Int) {
                values = [
                    "items": pages == 0 ? [] : Expect.cells(1...min(pages * 20, 57)),
                    "page": .int(Int64(pages)),
                    "hasMore": .bool(pages < 3),
                    "isEmpty": false,
                    "isRefreshing": false,
                    "isLoadingMore": false,
                ]
            }

            /// Short: the items by id only.
            var description: String {
                values.sorted { $0.key < $1.key }.map { name, value in
                    guard name == "items", case .array(let cells) = value else { return "\(name)=\(value)" }
                    return "items=[\(cells.compactMap { $0["id"]?.stringValue }.joined(separator: ","))]"
                }.joined(separator: " ")
            }
        }

        let harness = ProductListHarness()
        var recorder: ViewModelTest<ProductListViewModel> { harness.recorder }

        /// Runs `command` and answers its fetch with demo page `page`.
        private func succeed(_ command: String, page: Int) async {
            let occurrence = harness.api.calls.count + 1
            let run = harness.start(command)
            #expect(await harness.answer(run, occurrence: occurrence, with: .demoProducts(page: page)) == .succeeded(nil))
        }

        /// Brings the list to the state `point` starts from, and forgets the records of the way there.
        private func prepare(_ point: Point) async {
            for page in 0..<point.pagesBefore {
                await succeed(page == 0 ? "refresh" : "loadMore", page: page + 1)
            }
            if point == .loadMoreRetry {
                let run = harness.start("loadMore")
                _ = await harness.fail(run, occurrence: 2, with: .server(status: 500))
            }
            _ = recorder.take()
        }

        @Test(arguments: Point.allCases, kinds)
        func aFailedFetchChangesNothingAndTheNextOneRecovers(point: Point, error: BackendError) async {
            await prepare(point)
            let before = Snapshot(recorder)
            #expect(before == Snapshot(pages: point.pagesBefore))
            let reasonBefore = recorder.refusal("loadMore")

            var history: [ProductListHarness.Record] = []
            var overtaken: (run: CommandRun, call: StubCall)?
            if point == .refreshOverLoadMore {
                let run = harness.start("loadMore")
                overtaken = (run, await harness.api.call(.products, occurrence: harness.api.calls.count + 1))
                history = [.changed("isLoadingMore", true), .changed("loadState", "loading"), .changed("isLoadingMore", false)]
            }

            let occurrence = harness.api.calls.count + 1
            let run = harness.start(point.command)
            #expect(await harness.api.call(.products, occurrence: occurrence).arguments == [
                "page": .int(Int64(point.requestedPage)), "pageSize": 20,
            ])
            let failure = Expect.failure(error, input: point.command)
            #expect(await harness.fail(run, occurrence: occurrence, with: error) == .failed(failure))

            // One error, after the flag dropped; nothing else changed but the load state.
            let started: [ProductListHarness.Record] =
                overtaken == nil ? [.changed(point.flag, true), .changed("loadState", "loading")] : [.changed(point.flag, true)]
            recorder.expect(history + started + [
                .changed("lastError", Expect.error(error, input: point.command)),
                .changed(point.flag, false), .changed("loadState", "failed"),
                .event("error", Expect.error(error, input: point.command)),
            ])
            #expect(recorder.value("lastError") == Expect.error(error, input: point.command))
            #expect(Snapshot(recorder) == before)
            #expect(recorder.refusal("loadMore") == reasonBefore)
            #expect(recorder.refusal("loadMore") == (point == .refreshAtTheEnd ? "no more pages" : nil))
            if let overtaken {
                // The load-more the refresh overtook ended as cancelled, not as a second failure.
                #expect(overtaken.run.outcome == .cancelled)
                await recorder.until("the overtaken fetch to be cancelled") { !overtaken.call.isPending }
                #expect(overtaken.call.wasCancelled)
            }

            // The same command again, answered: everything recovers and no error is left to report.
            await succeed(point.command, page: point.requestedPage)
            #expect(!recorder.take().contains { $0.outputName == "error" })
            #expect(harness.api.calls.last?.arguments["page"] == .int(Int64(point.requestedPage)))
            #expect(Snapshot(recorder) == Snapshot(pages: point.command == "refresh" ? 1 : point.requestedPage))
            #expect(harness.api.pendingCalls.isEmpty)
            // The state a late subscriber reads: loaded, and the error gone.
            #expect(recorder.value("loadState") == "loaded")
            #expect(recorder.value("lastError") == .null)
            await harness.finish()
        }
    }
}
