import VMHostEventLoop
import VMHostJSONRPC
import VMHostRuntime
import VMHostWire

extension Host: ViewModelContextObserver {
    public func propertyDidChange(_ context: ViewModelContext, _ property: any AnyProperty) {
        guard let entry = viewModels[context.handle], !entry.subscriptions.isEmpty else { return }
        if dirty[context.handle] == nil {
            dirty[context.handle] = [property]
            dirtyOrder.append(context.handle)
            requestFlushAfterWork()
        } else if !dirty[context.handle]!.contains(where: { $0 === property }) {
            dirty[context.handle]!.append(property)
        }
    }

    public func eventDidEmit(_ context: ViewModelContext, name: String, value: JSON) {
        guard let entry = viewModels[context.handle], !entry.subscriptions.isEmpty else { return }
        flush(handle: context.handle)
        for id in entry.subscriptions {
            guard let subscription = subscriptions[id], subscription.events.contains(name) else { continue }
            var params = JSONObjectText()
            params.append("subscription", .string(subscription.name))
            params.append("vm", .string(context.handle))
            params.append("name", .string(name))
            params.append("value", value)
            var text = JSONObjectText()
            text.append("jsonrpc", literal: #""2.0""#)
            text.append("method", literal: #""vm.event""#)
            text.append("params", text: params.finish())
            output.push(text.finish(), key: id)
        }
    }

    /// Asks the event loop to flush this host after the work running now (a job, a timer), once:
    /// only hosts with changes are flushed there, whatever the number of hosts in the process.
    func requestFlushAfterWork() {
        guard flushesAfterWork, !flushRequested else { return }
        flushRequested = true
        EventLoop.shared.runAfterWork { [weak self] in
            guard let self else { return }
            self.flushRequested = false
            if self.flushesAfterWork { self.flush() }
        }
    }

    /// Writes the pending property changes of every view-model: one `vm.changed` per subscription.
    public func flush() {
        guard !dirtyOrder.isEmpty else { return }
        let order = dirtyOrder
        for handle in order { flush(handle: handle) }
    }

    /// Takes the change of every property of `handle` changed since its last flush and sends each
    /// subscription what it subscribed to: a splice for an array property of a `diff` subscription
    /// (made from the edits, not from comparing lists), else the full value, made once for all.
    func flush(handle: String) {
        guard let changed = dirty.removeValue(forKey: handle) else { return }
        dirtyOrder.removeAll { $0 == handle }
        var changes: [(property: any AnyProperty, change: PropertyChange)] = []
        for property in changed {
            if let change = property.takeChange() { changes.append((property, change)) }
        }
        guard !changes.isEmpty, let entry = viewModels[handle] else { return }
        var fullValues = [JSON?](repeating: nil, count: changes.count)
        func fullValue(_ index: Int) -> JSON {
            if let value = fullValues[index] { return value }
            let value = changes[index].property.json
            fullValues[index] = value
            return value
        }
        for id in entry.subscriptions {
            guard let subscription = subscriptions[id] else { continue }
            var message = ChangedMessage(subscription: subscription.name, vm: handle, values: [:], splices: [:], latest: [:])
            var spliced: [Int] = []
            for (index, (property, change)) in changes.enumerated() where subscription.sends(property.position) {
                if subscription.diff, case .splice(let splice) = change {
                    message.splices.append(property.name, [splice.json])
                    spliced.append(index)
                } else {
                    message.values.append(property.name, fullValue(index))
                }
            }
            guard !message.values.isEmpty || !message.splices.isEmpty else { continue }
            // Merging into a message the reader has not taken yet needs the full lists (two splice
            // runs become the latest value): made only then.
            output.push(merging: message, key: id) { newer in
                for index in spliced { newer.latest[changes[index].property.name] = fullValue(index) }
            }
        }
    }

    // MARK: Methods

    func subscribe(_ call: Call) throws(RPCError) -> JSON {
        let params = try params(call, ["vm", "outputs", "diff"])
        let entry = try viewModel(params)
        let names = try params.decode { (p) throws(JSONDecodingError) in try p.optional("outputs", as: [String].self) }
        let diff = try params.decode { (p) throws(JSONDecodingError) in try p.optional("diff", as: Bool.self) } ?? false
        var ordered: [any AnyProperty] = []
        var events: [String] = []
        if let names {
            for name in names {
                if let property = entry.context.property(named: name) {
                    if !ordered.contains(where: { $0 === property }) { ordered.append(property) }
                } else if entry.context.event(named: name) != nil {
                    if !events.contains(name) { events.append(name) }
                } else {
                    throw unknownOutput(name, of: entry)
                }
            }
        } else {
            ordered = entry.context.properties
            events = entry.context.events.map(\.name)
        }
        try admitSubscription()
        flush(handle: entry.handle)
        nextSubscription += 1
        var values = JSONObject()
        values.reserveCapacity(ordered.count)
        var sends = [Bool](repeating: false, count: entry.context.properties.count)
        for property in ordered {
            values.append(property.name, property.json)
            sends[property.position] = true
        }
        if entry.subscriptions.isEmpty {
            for property in entry.context.properties { property.startRecordingChanges() }
        }
        let subscription = Subscription(id: nextSubscription, vm: entry.handle, sends: sends, events: events, diff: diff)
        subscriptions[subscription.id] = subscription
        viewModels[entry.handle]!.subscriptions.append(subscription.id)
        return ["subscription": .string(subscription.name), "values": .object(values)]
    }

    func unsubscribe(_ call: Call) throws(RPCError) -> JSON {
        let params = try params(call, ["subscription"])
        let name = try params.decode { (p) throws(JSONDecodingError) in try p.required("subscription", as: String.self) }
        guard let id = Subscription.id(named: name), id <= nextSubscription else {
            throw RPCError.invalidParams("params.subscription: no subscription \"\(name)\"")
        }
        // One this host made that ended already (unsubscribed, or its view-model disposed): done.
        guard let subscription = subscriptions[id] else { return [:] }
        flush(handle: subscription.vm)
        endSubscription(subscription.id)
        return [:]
    }

    func endSubscription(_ id: Int) {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return }
        viewModels[subscription.vm]?.subscriptions.removeAll { $0 == id }
        guard let entry = viewModels[subscription.vm] else { return }
        if entry.subscriptions.isEmpty {
            for property in entry.context.properties { property.stopRecordingChanges() }
        }
    }
}
