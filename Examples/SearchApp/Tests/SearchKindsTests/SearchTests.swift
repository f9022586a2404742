import SearchKinds
import Testing
import VMHostTesting

@Suite("Search")
@HostActor
struct SearchTests {
    /// Types `text` one character at a time, `gap` apart on the clock.
    func type(_ text: String, into test: ViewModelTest<SearchViewModel>, gap: Duration = .milliseconds(100)) async {
        var typed = ""
        for character in text {
            typed.append(character)
            test.set(\.$query, typed)
            await test.advance(by: gap)
        }
    }

    @Test func threeKeystrokesWithin300MillisecondsMakeOneCall() async {
        let api = StubSearch()
        let test = ViewModelTest { SearchViewModel(api: api) }
        await type("swi", into: test)
        #expect(api.calls.calls.isEmpty)
        await test.advance(by: .milliseconds(200))
        let call = await api.calls.call(.search)
        #expect(call.arguments == ["query": "swi", "page": 1])
        call.succeed(ArticlePage(articles: [swiftConcurrency], hasMore: false))
        await test.settle()
        test.expect([
            .changed(\.loads.loadState, .loading), .changed(\.$articles, [swiftConcurrency]), .changed(\.loads.loadState, .loaded),
        ])
        #expect(api.calls.calls.count == 1)
        await test.finish(also: [api.calls.verifyNothingPending])
    }

    @Test func aSupersededQuerysResultNeverShows() async {
        let api = StubSearch()
        let test = ViewModelTest { SearchViewModel(api: api) }
        test.set(\.$query, "swift")
        await test.advance(by: .milliseconds(300))
        let first = await api.calls.call(.search)
        test.set(\.$query, "swift m")
        await test.advance(by: .milliseconds(300))
        let second = await api.calls.call(.search, occurrence: 2)
        #expect(first.wasCancelled)
        // The first answer comes late: it shows nothing.
        first.succeed(ArticlePage(articles: [swiftConcurrency, swiftOnLinux], hasMore: false))
        second.succeed(ArticlePage(articles: [swiftMacros], hasMore: false))
        await test.settle()
        test.expect([.changed(\.loads.loadState, .loading), .changed(\.$articles, [swiftMacros]), .changed(\.loads.loadState, .loaded)])
        await test.finish(also: [api.calls.verifyNothingPending])
    }

    @Test func aBlankQueryClearsWithNoCall() async {
        let api = StubSearch()
        let test = ViewModelTest { SearchViewModel(api: api) }
        test.set(\.$query, "swift")
        await test.advance(by: .milliseconds(300))
        await api.calls.call(.search).succeed(ArticlePage(articles: [swiftConcurrency], hasMore: true))
        await test.settle()
        _ = test.take()
        test.set(\.$query, "   ")
        await test.advance(by: .milliseconds(300))
        // The blank query's work runs and ends in the timer's turn: the load state, first to change,
        // ends `idle`, and its `loading` in between is never sent.
        test.expect([.changed(\.loads.loadState, .idle), .changed(\.$articles, []), .changed(\.$hasMore, false)])
        #expect(api.calls.calls.count == 1)
        await test.finish(also: [api.calls.verifyNothingPending])
    }

    @Test func pagingAppends() async {
        let api = StubSearch()
        let test = ViewModelTest { SearchViewModel(api: api) }
        test.set(\.$query, "swift")
        await test.advance(by: .milliseconds(300))
        await api.calls.call(.search).succeed(ArticlePage(articles: [swiftConcurrency, swiftMacros], hasMore: true))
        await test.settle()
        _ = test.take()
        let more = test.send(\.loadMore)
        let call = await api.calls.call(.search, occurrence: 2)
        #expect(call.arguments == ["query": "swift", "page": 2])
        call.succeed(ArticlePage(articles: [swiftOnLinux], hasMore: false))
        #expect(await more.finished() == .succeeded(nil))
        test.expect([
            .changed(\.loads.loadState, .loading), .changed(\.$articles, [swiftConcurrency, swiftMacros, swiftOnLinux]),
            .changed(\.$hasMore, false), .changed(\.loads.loadState, .loaded),
        ])
        #expect(test.refusal("loadMore") == "no more results")
        await test.finish(also: [api.calls.verifyNothingPending])
    }

    @Test func anErrorIsReportedOnceTheOldResultsStayAndRetryRepeatsIt() async {
        let api = StubSearch()
        let test = ViewModelTest { SearchViewModel(api: api) }
        test.set(\.$query, "swift")
        await test.advance(by: .milliseconds(300))
        await api.calls.call(.search).succeed(ArticlePage(articles: [swiftConcurrency], hasMore: true))
        await test.settle()
        _ = test.take()
        #expect(test.refusal("retry") == "nothing failed")

        test.send(\.loadMore)
        await api.calls.call(.search, occurrence: 2).fail(SearchFailure.unavailable)
        await test.settle()
        var failure = SearchFailure.unavailable.domainError(in: .en)
        failure.input = "loadMore"
        test.expect([
            .changed(\.loads.loadState, .loading), .changed(\.loads.lastError, failure), .changed(\.loads.loadState, .failed),
            .failed(failure),
        ])
        #expect(test.viewModel.articles == [swiftConcurrency])

        let retry = test.send(\.retry)
        let again = await api.calls.call(.search, occurrence: 3)
        #expect(again.arguments == ["query": "swift", "page": 2])
        again.succeed(ArticlePage(articles: [swiftOnLinux], hasMore: false))
        #expect(await retry.finished() == .succeeded(nil))
        test.expect([
            .changed(\.loads.loadState, .loading), .changed(\.$articles, [swiftConcurrency, swiftOnLinux]), .changed(\.$hasMore, false),
            .changed(\.loads.lastError, nil), .changed(\.loads.loadState, .loaded),
        ])
        await test.finish(also: [api.calls.verifyNothingPending])
    }

    @Test func theDescriptionHolds() {
        let api = StubSearch()
        #expect(DescribedKindCheck.problems(kinds: [SearchViewModel.factory(api: api), ArticleViewModel.factory(api: api)]) == [])
    }
}

@Suite("Article")
@HostActor
struct ArticleTests {
    @Test func theArticleLoadsAsTheScreenOpens() async {
        let api = StubSearch()
        let test = ViewModelTest { ArticleViewModel(id: "a1", api: api) }
        // Made loading: no client sent anything.
        #expect(test.viewModel.loads.state == .loading)
        await api.calls.call(.article).succeed(swiftConcurrency)
        await test.settle()
        test.expect([.changed(\.$article, swiftConcurrency), .changed(\.loads.loadState, .loaded)])
        await test.finish(also: [api.calls.verifyNothingPending])
    }

    @Test func theFavouriteFlipsAtOnceAndRollsBackWhenTheCallFails() async {
        let api = StubSearch()
        let test = ViewModelTest { ArticleViewModel(id: "a1", api: api) }
        await api.calls.call(.article).succeed(swiftConcurrency)
        await test.settle()
        _ = test.take()
        var favourite = swiftConcurrency
        favourite.favourite = true

        let saved = test.send(\.favourite)
        await test.settle()
        test.expect([.changed(\.$article, favourite)])
        let call = await api.calls.call(.setFavourite)
        #expect(call.arguments == ["id": "a1", "favourite": true])
        call.succeed()
        #expect(await saved.finished() == .succeeded(nil))
        #expect(test.take() == [])

        let failed = test.send(\.favourite)
        await test.settle()
        test.expect([.changed(\.$article, swiftConcurrency)])
        await api.calls.call(.setFavourite, occurrence: 2).fail(SearchFailure.unavailable)
        var error = SearchFailure.unavailable.domainError(in: .en)
        error.input = "favourite"
        #expect(await failed.finished() == .failed(error))
        test.expect([.changed(\.$article, favourite), .failed(error)])
        await test.finish(also: [api.calls.verifyNothingPending])
    }
}
