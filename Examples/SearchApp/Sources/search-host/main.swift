// The search app's executable: its two kinds on the in-memory search service, served on stdio by
// the framework's server.
import SearchKinds
import VMHost

Server(
    ServerConfiguration(
        name: "search-host", version: "1.0.0",
        options: [OptionSpec("latency-ms", value: "MS", defaultValue: "100", abstract: "How long each search call takes, on the host's clock.")],
        errorKinds: SearchFailure.kinds
    ) { environment throws(UsageError) in
        let latency = try environment.arguments.integer("latency-ms") ?? 100
        guard latency >= 0 else { throw UsageError("--latency-ms must not be negative") }
        let service = InMemorySearchService(clock: environment.clock, latency: .milliseconds(latency))
        return ServedApp(
            kinds: [SearchViewModel.factory(api: service), ArticleViewModel.factory(api: service)],
            controls: [
                TestControl("control.search.fail", params: ["calls"]) { params throws(RPCError) in
                    service.failures = Int(params["calls"]?.intValue ?? 1)
                },
            ],
            summary: "in-memory search, latency \(latency) ms")
    }
).run()
