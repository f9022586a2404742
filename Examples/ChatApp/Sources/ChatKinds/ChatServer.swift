import VMHost
import VMHostHTTP

/// The chat app's server: its two kinds on one client of the chat server `--server-url` names.
public enum ChatServer {
    public static let server = Server(
        ServerConfiguration(
            name: "chat-host", version: "1.0.0",
            options: [
                OptionSpec("server-url", value: "URL", defaultValue: "http://127.0.0.1:8080", abstract: "The chat server's base URL (http or https)."),
                OptionSpec("timeout-ms", value: "MS", defaultValue: "10000", abstract: "How long a call may take, on the host's clock."),
                OptionSpec("author", value: "NAME", defaultValue: "me", abstract: "Whose messages this client sends."),
            ],
            errorKinds: ChatFailure.kinds
        ) { environment throws(UsageError) in
            let text = environment.arguments.value("server-url") ?? "http://127.0.0.1:8080"
            guard let url = HTTPURL(text) else { throw UsageError("--server-url must be an http or https URL, got '\(text)'") }
            let timeout = try environment.arguments.integer("timeout-ms") ?? 10_000
            guard timeout > 0 else { throw UsageError("--timeout-ms must be positive") }
            let author = environment.arguments.value("author") ?? "me"
            let api = ChatAPI(baseURL: url, clock: environment.clock, timeout: .milliseconds(timeout))
            return ServedApp(
                kinds: [ThreadViewModel.factory(api: api, author: author), SearchViewModel.factory(api: api)],
                summary: "chat server \(url), timeout \(timeout) ms")
        })
}
