/// A command line that cannot be used; the message says what is wrong. The server writes it with
/// the usage to stderr and exits 64 (EX_USAGE).
public struct UsageError: Error, Sendable, Equatable {
    /// What is wrong, naming the option: `--timeout-ms must be a positive number of milliseconds, got 0`.
    public var message: String
    /// A usage error saying `message`.
    public init(_ message: String) { self.message = message }
}
