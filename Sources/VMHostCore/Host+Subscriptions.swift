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

    /// Writes the pending property changes of every view-model: one `vm.changed` per subscription.
    public func flush() {
        guard !dirtyOrder.isEmpty else { return }
        let order = dirtyOrder
        for handle in order { flush(handle: handle) }
    }

    func flush(handle: String) {
        guard let changed = dirty.removeValue(forKey: handle) else { return }
        dirtyOrder.removeAll { $0 == handle }
        guard let entry = viewModels[handle] else { return }
        var current: [String: JSON] = [:]
        for id in entry.subscriptions {
            guard let subscription = subscriptions[id] else { continue }
            var message = ChangedMessage(subscription: subscription.name, vm: handle, values: [:], splices: [:], latest: [:])
            for property in changed {
                let index = property.position
                guard subscription.lastSent.indices.contains(index), let previous = subscription.lastSent[index] else { continue }
                let value: JSON
                if let cached = current[property.name] {
                    value = cached
                } else {
                    value = property.json
                    current[property.name] = value
                }
                if previous == value { continue }
                subscription.lastSent[index] = value
                if subscription.diff, case .array(let old) = previous, case .array(let new) = value {
                    if let edit = splice(from: old, to: new) {
                        message.splices.append(property.name, [edit])
                        message.latest[property.name] = value
                    }
                } else {
                    message.values.append(property.name, value)
                }
            }
            if !message.values.isEmpty || !message.splices.isEmpty {
                output.push(merging: message, key: id)
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
        flush(handle: entry.handle)
        nextSubscription += 1
        var values = JSONObject()
        values.reserveCapacity(ordered.count)
        var lastSent = [JSON?](repeating: nil, count: entry.context.properties.count)
        for property in ordered {
            let value = property.json
            values.append(property.name, value)
            lastSent[property.position] = value
        }
        let subscription = Subscription(id: nextSubscription, vm: entry.handle, lastSent: lastSent, events: events, diff: diff)
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
    }
}
