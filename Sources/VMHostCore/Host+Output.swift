@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// Everything this host writes goes through here, in the one order of SPEC §4:
///
/// - a **reply** (``writeReply(_:)``, the engine's only way out) is written after every property
///   change pending, so a client that got a reply has seen every notification its request caused;
/// - an **event** is written after its view-model's pending changes, so a view-model's changes and
///   events keep their order;
/// - the **end of a turn** (``endTurn()``: a message was handled and the work it started ran as far
///   as it could, or a timer fired) writes what is still pending: one `vm.changed` per subscription,
///   last values only, unchanged values left out.
///
/// A transport feeds messages through a ``Connection``, which ends each turn here; nothing else
/// writes to the output queue.
extension Host: ViewModelContextObserver {
    /// Writes `body`, a response (or a batch's array of them), after every pending change.
    func writeReply(_ body: [UInt8]) {
        flush()
        output.push(body)
    }

    /// Ends a turn: writes what the message changed, lets the work it started run (on the host
    /// thread, to its first real wait), and writes what that changed.
    public func endTurn() {
        let outer = inTurn
        inTurn = true
        endTurn(outer: outer)
    }

    /// ``endTurn()`` for a turn begun by setting ``inTurn``; `outer` is what it was before (a turn
    /// may nest in another of the same host: a batch slice, a message written from a callback).
    package func endTurn(outer: Bool) {
        flush()
        EventLoop.shared.drain()
        inTurn = outer
        flush()
    }

    package func propertyDidChange(_ context: ViewModelContext, _ property: any AnyProperty) {
        // Only a view-model with a subscription keeps its changes (``ViewModelContext/isObserved``,
        // kept by subscribe and unsubscribe): known without looking its handle up.
        guard context.isObserved else { return }
        if Self.note(property, in: &dirty[context.handle, default: []]) {
            dirtyOrder.append(context.handle)
            requestFlushAfterWork()
        }
    }

    /// Adds `property` to `changed` unless it is there; true when it is the first (`changed` was
    /// empty). A loop, not `contains(where:)`: a closure handed to the standard library checks at
    /// run time that it runs on the host actor.
    private static func note(_ property: any AnyProperty, in changed: inout [any AnyProperty]) -> Bool {
        for held in changed where held === property { return false }
        changed.append(property)
        return changed.count == 1
    }

    package func eventDidEmit(_ context: ViewModelContext, name: String, value: JSON) {
        guard let entry = viewModels[context.handle], !entry.subscriptions.isEmpty else { return }
        flush(handle: context.handle)
        for id in entry.subscriptions {
            guard let subscription = subscriptions[id], subscription.events.contains(name) else { continue }
            var params = JSONObjectText()
            params.append("subscription", .string(subscription.name))
            params.append("vm", .string(context.handle))
            params.append("name", .string(name))
            params.append("value", value)
            var text = JSONObjectText.jsonRPC()
            text.append("method", literal: #""vm.event""#)
            text.append("params", text: params.finish())
            output.push(text.finish(), key: id)
        }
    }

    /// Asks the event loop to flush this host after the work running now (a job, a timer), once:
    /// only hosts with changes are flushed there, whatever the number of hosts in the process.
    /// A host in a turn is not flushed there: its turn's end writes what the turn changed, in one
    /// `vm.changed` per subscription, whatever work of other hosts ran meanwhile.
    func requestFlushAfterWork() {
        guard flushesAfterWork, !flushRequested else { return }
        flushRequested = true
        EventLoop.shared.runAfterWork { [weak self] in
            guard let self else { return }
            self.flushRequested = false
            if self.flushesAfterWork && !self.inTurn { self.flush() }
        }
    }

    /// Where `handle` is in `handles` (each handle is there once at most).
    private static func index(of handle: String, in handles: [String]) -> Int? {
        for index in handles.indices where handles[index] == handle { return index }
        return nil
    }

    /// Writes the pending property changes of every view-model: one `vm.changed` per subscription.
    package func flush() {
        guard !dirtyOrder.isEmpty else { return }
        let order = dirtyOrder
        for handle in order { flush(handle: handle) }
    }

    /// Takes the change of every property of `handle` changed since its last flush and sends each
    /// subscription what it subscribed to: a splice for an array property of a `diff` subscription
    /// (made from the edits, not from comparing lists), else the full value, made once for all.
    func flush(handle: String) {
        guard let changed = dirty.removeValue(forKey: handle) else { return }
        // A loop, not `removeAll(where:)`: a closure handed to the standard library checks at run
        // time that it runs on the host actor.
        if let index = Self.index(of: handle, in: dirtyOrder) { dirtyOrder.remove(at: index) }
        var changes: [(property: any AnyProperty, change: PropertyChange)] = []
        changes.reserveCapacity(changed.count)
        for property in changed {
            if let change = property.takeChange() { changes.append((property, change)) }
        }
        guard !changes.isEmpty, let entry = viewModels[handle] else { return }
        // A full value is made once for all subscriptions; with one subscription, nothing is kept.
        var fullValues = FullValues(changes: changes, shared: entry.subscriptions.count > 1)
        for id in entry.subscriptions {
            guard let subscription = subscriptions[id] else { continue }
            var values: [JSONObject.Member] = []
            values.reserveCapacity(changes.count)
            var splices = JSONObject()
            var spliced: [Int] = []
            for index in changes.indices where subscription.sends(changes[index].property.position) {
                let (property, change) = changes[index]
                if subscription.diff, case .splice(let splice) = change {
                    splices.append(property.name, [splice.json])
                    spliced.append(index)
                } else {
                    values.append(JSONObject.Member(key: property.name, value: fullValues.value(index)))
                }
            }
            guard !values.isEmpty || !splices.isEmpty else { continue }
            let message = ChangedMessage(
                subscription: subscription.name, vm: handle, values: JSONObject(members: values), splices: splices, latest: [:])
            // Merging into a message the reader has not taken yet needs the full lists (two splice
            // runs become the latest value): made only then.
            output.push(merging: message, key: id) { newer in
                for index in spliced { newer.latest[changes[index].property.name] = fullValues.value(index) }
            }
        }
    }

    /// The full values of the changed properties of one flush, each made when first asked for, and
    /// kept for the next subscription when there are several (`shared`).
    @HostActor
    private struct FullValues {
        let changes: [(property: any AnyProperty, change: PropertyChange)]
        var made: [JSON?]
        let shared: Bool

        init(changes: [(property: any AnyProperty, change: PropertyChange)], shared: Bool) {
            self.changes = changes
            self.shared = shared
            made = shared ? [JSON?](repeating: nil, count: changes.count) : []
        }

        mutating func value(_ index: Int) -> JSON {
            guard shared else { return changes[index].property.json }
            if let value = made[index] { return value }
            let value = changes[index].property.json
            made[index] = value
            return value
        }
    }
}
