import Synchronization
import Testing

/// The issues the test kit records while a block runs, captured instead of recorded, so that a
/// test of the kit's own failure messages asserts them like any value: it neither fails nor shows
/// them as known issues in every run.
///
/// A test that captures carries the trait ``Testing/Trait/capturingKitIssues``; inside it,
/// ``capture(_:)`` binds a collector for the block (a task-local value, so the issues of other
/// tests running in parallel are not taken), and the trait hands every issue recorded under it to
/// the collector instead of the test. Issues outside the block, `#expect` after it included, are
/// the test's as usual.
enum KitIssues {
    /// The issues of one block, in the order they were recorded.
    final class Collector: Sendable {
        let issues = Mutex<[Issue]>([])
    }

    @TaskLocal static var collector: Collector?

    /// Runs `body` and returns the issues recorded while it ran (none reach the test).
    static func capture(isolation: isolated (any Actor)? = #isolation, _ body: () async -> Void) async -> [Issue] {
        let collector = Collector()
        await $collector.withValue(collector) { await body() }
        return collector.issues.withLock { $0 }
    }

    /// Runs `body` and returns the comments of the issues recorded while it ran.
    static func comments(isolation: isolated (any Actor)? = #isolation, _ body: () async -> Void) async -> [String] {
        await capture(body).flatMap { $0.comments.map(\.rawValue) }
    }
}

extension Trait where Self == IssueHandlingTrait {
    /// Takes the issues recorded inside ``KitIssues/capture(_:)`` out of the test, to the collector.
    static var capturingKitIssues: Self {
        .compactMapIssues { issue in
            guard let collector = KitIssues.collector else { return issue }
            collector.issues.withLock { $0.append(issue) }
            return nil
        }
    }
}
