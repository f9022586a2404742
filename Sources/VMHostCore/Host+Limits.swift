@_spi(Transport) import VMHostJSONRPC
import VMHostRuntime
@_spi(Transport) import VMHostWire

extension Host {
    /// What one connection may hold at once (protocol/SPEC.md §10). A request that would pass a
    /// cap is answered -32006 naming it and changes nothing; disposing, unsubscribing or a command
    /// ending makes room again.
    ///
    /// The defaults set no cap: a stdio host serves the one client that owns its process. A
    /// transport that serves many clients in one process (WebSocket) sets its own.
    public struct Limits: Sendable, Equatable {
        /// View-models alive at once (`vm.create`).
        public var maxViewModels: Int
        /// Subscriptions alive at once (`vm.subscribe`).
        public var maxSubscriptions: Int
        /// Commands running at once (`vm.send` to a command input, as a request or a notification).
        public var maxCommandsInFlight: Int

        /// Caps of `maxViewModels` view-models, `maxSubscriptions` subscriptions and
        /// `maxCommandsInFlight` commands in flight at once; none by default.
        public init(maxViewModels: Int = .max, maxSubscriptions: Int = .max, maxCommandsInFlight: Int = .max) {
            self.maxViewModels = maxViewModels
            self.maxSubscriptions = maxSubscriptions
            self.maxCommandsInFlight = maxCommandsInFlight
        }
    }

    /// -32006 before a `vm.create` that would pass ``Limits/maxViewModels``.
    func admitViewModel() throws(RPCError) {
        let cap = configuration.limits.maxViewModels
        guard viewModels.count < cap else {
            throw .limitReached(name: "viewModels", limit: cap, what: "view-models alive at once", relief: "vm.dispose one first")
        }
    }

    /// -32006 before a `vm.subscribe` that would pass ``Limits/maxSubscriptions``.
    func admitSubscription() throws(RPCError) {
        let cap = configuration.limits.maxSubscriptions
        guard subscriptions.count < cap else {
            throw .limitReached(name: "subscriptions", limit: cap, what: "subscriptions alive at once", relief: "vm.unsubscribe one first")
        }
    }

    /// -32006 before a command starts that would pass ``Limits/maxCommandsInFlight``.
    func admitCommand() throws(RPCError) {
        let cap = configuration.limits.maxCommandsInFlight
        guard cap < .max else { return }
        guard runningSentCommands < cap else {
            throw .limitReached(name: "commandsInFlight", limit: cap, what: "commands running at once", relief: "wait for one to end")
        }
    }
}

extension RPCError {
    /// A command sent once the server is stopping (a signal to vmhost-web): not started
    /// (protocol/SPEC.md §12).
    static let stopping = RPCError(code: requestCancelledCode, message: "Request cancelled: the server is stopping")

    /// -32006 with `data: {name, limit}`: `name` is the cap's name, `limit` its value.
    static func limitReached(name: String, limit: Int, what: String, relief: String) -> RPCError {
        RPCError(
            code: limitReachedCode,
            message: "Limit reached: at most \(limit) \(what) per session (\(name)); \(relief)",
            data: ["name": .string(name), "limit": .int(Int64(limit))])
    }
}
