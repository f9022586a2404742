#if WebSocket
import HummingbirdCore
import Logging
import NIOCore

/// A connection of the server: a ``ConnectionGuard`` first on its raw bytes, then the HTTP and
/// WebSocket handling of `Inner`.
struct GuardedChildChannel<Inner: ServerChildChannel>: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let inner: Inner.Value
        let outcome: GuardOutcome
        var channel: any Channel { inner.channel }
    }

    let inner: Inner
    let limiter: ConnectionLimiter
    let timeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        setup(channel: channel, logger: logger, refuse: false)
    }

    /// `refuse`: the connection is answered 503 and closed (the supervisor's caps, ``WorkerPool``).
    func setup(channel: any Channel, logger: Logger, refuse: Bool) -> EventLoopFuture<Value> {
        let outcome = GuardOutcome()
        let connectionGuard = ConnectionGuard(limiter: limiter, outcome: outcome, timeout: timeout, refuse: refuse)
        do {
            try channel.pipeline.syncOperations.addHandler(connectionGuard, position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger).map { Value(inner: $0, outcome: outcome) }
    }

    func handle(value: Value, logger: Logger) async {
        // A connection refused as it opened was answered and closed by its guard.
        guard !value.outcome.refusedAtOpen else { return }
        await inner.handle(value: value.inner, logger: logger)
    }
}
#endif
