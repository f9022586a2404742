@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
import VMHostRuntime
@_spi(Transport) import VMHostWire

extension Host {
    // MARK: Methods

    func subscribe(_ call: Call) throws(RPCError) -> JSON {
        let params = try call.params(allowing: ["vm", "outputs", "diff"])
        let entry = try viewModel(params)
        let names = try params.optionalValue("outputs", as: [String].self)
        let diff = try params.optionalValue("diff", as: Bool.self) ?? false
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
            entry.context.isObserved = false
            for property in entry.context.properties { property.startRecordingChanges() }
        }
        let subscription = Subscription(id: nextSubscription, vm: entry.handle, sends: sends, events: events, diff: diff)
        subscriptions[subscription.id] = subscription
        viewModels[entry.handle]!.subscriptions.append(subscription.id)
        entry.context.isObserved = true
        return ["subscription": .string(subscription.name), "values": .object(values)]
    }

    func unsubscribe(_ call: Call) throws(RPCError) -> JSON {
        let params = try call.params(allowing: ["subscription"])
        let name = try params.value("subscription", as: String.self)
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
            entry.context.isObserved = false
            for property in entry.context.properties { property.stopRecordingChanges() }
        }
    }
}

extension Host {
    /// Replaces everything queued for the client by the current state: the output waiting is
    /// dropped, and each subscription is sent, in the order made, one `vm.changed` with every value
    /// it subscribed to, marked `"resync": true` (protocol/SPEC.md §12, "Resume": a page that
    /// missed output it cannot be sent again). The ids of the requests still running, which will
    /// be answered; a request of the page not among them and not answered was answered in what
    /// was dropped.
    package func resync() -> [JSON] {
        flush()
        _ = output.takeAll()
        for id in subscriptions.keys.sorted() {
            guard let subscription = subscriptions[id], let entry = viewModels[subscription.vm] else { continue }
            var values = JSONObject()
            for property in entry.context.properties where subscription.sends(property.position) {
                values.append(property.name, property.json)
            }
            var params = JSONObjectText()
            params.append("subscription", .string(subscription.name))
            params.append("vm", .string(subscription.vm))
            params.append("values", .object(values))
            params.append("resync", .bool(true))
            var text = JSONObjectText.jsonRPC()
            text.append("method", literal: #""vm.changed""#)
            text.append("params", text: params.finish())
            output.push(text.finish())
        }
        return engine.pendingIDs
    }
}
