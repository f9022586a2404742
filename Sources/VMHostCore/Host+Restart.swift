@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// What makes a host's screens again after the server restarted (protocol/SPEC.md §12, "After a
/// restart"): its *screens*, a JSON value the transport keeps on disk as they change, and
/// ``restoreScreens(_:)``, which makes them again in a new host.
///
/// The screens are: the locale; each live view-model in the order made, with its handle, kind and
/// args, the last value sent to each of its value inputs in the order sent (never a secret input,
/// nor one its kind leaves out, ``Restorable/unkeptInputs``), and what a ``Restorable`` kind keeps
/// beside them; each live subscription with its name and what it sends; and the counters that
/// name the next handle and the next subscription, so that every name the page holds stays valid.
/// No reply, event or running command is kept: a command does not run again.
extension Host {
    /// Keeps `value`, just sent to the value input `input` of view-model `handle`, unless it is a
    /// secret or its kind leaves it out: the last of the input's values kept, moved last.
    func keep(_ value: JSON, of input: any AnyInput, in handle: String) {
        guard !input.isSecret, let entry = viewModels[handle] else { return }
        if let restorable = entry.instance as? any Restorable, type(of: restorable).unkeptInputs.contains(input.name) { return }
        var kept = entry.kept
        kept.removeAll { $0.input == input.name }
        // A value holding an app's secret member is not kept, nor the one it replaced.
        if !Self.holds(keptSecretMembers, value) { kept.append((input.name, value)) }
        viewModels[handle]?.kept = kept
    }

    /// Whether `value` has a member named in `names`, at any depth.
    static func holds(_ names: Set<String>, _ value: JSON) -> Bool {
        guard !names.isEmpty else { return false }
        switch value {
        case .object(let object): return object.contains { names.contains($0.key) || holds(names, $0.value) }
        case .array(let items): return items.contains { holds(names, $0) }
        default: return false
        }
    }

    /// The host's screens now (``keepsScreens``): what ``restoreScreens(_:)`` makes again.
    @_spi(Transport) public func screens() -> JSON {
        var models: [JSON] = []
        for handle in creationOrder {
            guard let entry = viewModels[handle], !entry.context.isDisposed else { continue }
            var model = JSONObject()
            model.append("vm", .string(handle))
            model.append("kind", .string(entry.kind))
            if let args = entry.args { model.append("args", args) }
            model.append("inputs", .array(entry.kept.map { .array([.string($0.input), $0.value]) }))
            if let restorable = entry.instance as? any Restorable, let restoration = restorable.restoration {
                model.append("restoration", restoration)
            }
            models.append(.object(model))
        }
        var subscribed: [JSON] = []
        for id in subscriptions.keys.sorted() {
            guard let subscription = subscriptions[id], let entry = viewModels[subscription.vm] else { continue }
            var outputs: [JSON] = []
            for property in entry.context.properties where subscription.sends(property.position) {
                outputs.append(.string(property.name))
            }
            outputs += subscription.events.map { .string($0) }
            subscribed.append([
                "subscription": .int(Int64(id)), "vm": .string(subscription.vm), "outputs": .array(outputs),
                "diff": .bool(subscription.diff),
            ])
        }
        return [
            "locale": .string(locale.tag), "nextHandle": .int(Int64(nextHandle)),
            "nextSubscription": .int(Int64(nextSubscription)), "viewModels": .array(models),
            "subscriptions": .array(subscribed),
        ]
    }

    /// The largest handle or subscription number taken from kept screens: a larger one is left out
    /// (a counter past it could not go on without overflowing).
    static let maxRestoredNumber = Int(Int32.max)

    /// Makes `screens` (from ``screens()``, read back from disk) again in this new host: the
    /// locale, each view-model with its handle and args, its kept inputs sent again in order, then
    /// its ``Restorable/restore(from:)``; each subscription under its name. What cannot be made
    /// again (a kind no longer served, args or a value refused now) is left out and said in the
    /// lines returned; nothing of it traps. Output made meanwhile is dropped: the page that resumes
    /// is sent the current state (``resync()``).
    @_spi(Transport) public func restoreScreens(_ screens: JSON) -> [String] {
        var problems: [String] = []
        guard case .object(let plan) = screens else { return ["the screens are not a JSON object"] }
        if let tag = plan["locale"]?.stringValue {
            if let chosen = AppLocale.match(tag, in: configuration.locales) { locale = chosen } else { problems.append("locale \(tag) is not served") }
        }
        var restorations: [(Entry, JSON)] = []
        for case .object(let model) in plan["viewModels"]?.arrayValue ?? [] {
            guard let handle = model["vm"]?.stringValue, !handle.isEmpty, viewModels[handle] == nil,
                let kind = model["kind"]?.stringValue
            else {
                problems.append("a view-model without a valid vm and kind")
                continue
            }
            guard let factory = catalog[kind] else {
                problems.append("view-model \(handle): kind \(kind) is not served")
                continue
            }
            do throws(RPCError) { try admitViewModel() } catch {
                problems.append("view-model \(handle): \(error.message)")
                continue
            }
            let context = ViewModelContext(handle: handle, kind: kind, clock: configuration.clock, locale: locale)
            context.lookup = { [unowned self] in self.viewModels[$0]?.instance }
            let instance: AnyObject
            do throws(JSONDecodingError) {
                instance = try factory.make(args: model["args"], context: context)
            } catch {
                context.dispose()
                problems.append("view-model \(handle): its args are refused now (\(error))")
                continue
            }
            context.observer = self
            viewModels[handle] = Entry(handle: handle, kind: kind, context: context, instance: instance, args: model["args"])
            creationOrder.append(handle)
            for case .array(let pair) in model["inputs"]?.arrayValue ?? [] {
                guard pair.count == 2, let name = pair[0].stringValue, let input = context.input(named: name),
                    input.kind == .value, !input.isSecret, let synchronous = input.asSynchronous
                else {
                    problems.append("view-model \(handle): an input that is no value input of \(kind) now")
                    continue
                }
                do throws(InputError) {
                    _ = try synchronous.send(pair[1])
                    keep(pair[1], of: input, in: handle)
                } catch {
                    problems.append("view-model \(handle): the value of \(name) is refused now")
                }
            }
            if let restoration = model["restoration"], let entry = viewModels[handle] { restorations.append((entry, restoration)) }
        }
        for (entry, restoration) in restorations {
            (entry.instance as? any Restorable)?.restore(from: restoration)
        }
        for case .object(let subscribed) in plan["subscriptions"]?.arrayValue ?? [] {
            guard let number = subscribed["subscription"]?.intValue, let id = Int(exactly: number), id > 0,
                id <= Self.maxRestoredNumber, subscriptions[id] == nil,
                let handle = subscribed["vm"]?.stringValue, let entry = viewModels[handle]
            else { continue }
            var sends = [Bool](repeating: false, count: entry.context.properties.count)
            var events: [String] = []
            for name in (subscribed["outputs"]?.arrayValue ?? []).compactMap(\.stringValue) {
                if let property = entry.context.property(named: name) {
                    sends[property.position] = true
                } else if entry.context.event(named: name) != nil, !events.contains(name) {
                    events.append(name)
                }
            }
            do throws(RPCError) { try admitSubscription() } catch {
                problems.append("subscription s\(id): \(error.message)")
                continue
            }
            flush(handle: handle)
            if entry.subscriptions.isEmpty {
                entry.context.isObserved = false
                for property in entry.context.properties { property.startRecordingChanges() }
            }
            subscriptions[id] = Subscription(id: id, vm: handle, sends: sends, events: events, diff: subscribed["diff"]?.boolValue ?? false)
            viewModels[handle]!.subscriptions.append(id)
            entry.context.isObserved = true
        }
        if let next = plan["nextHandle"]?.intValue, let value = Int(exactly: next), value > nextHandle, value <= Self.maxRestoredNumber {
            nextHandle = value
        }
        if let next = plan["nextSubscription"]?.intValue, let value = Int(exactly: next), value > nextSubscription,
            value <= Self.maxRestoredNumber
        {
            nextSubscription = value
        }
        nextSubscription = max(nextSubscription, subscriptions.keys.max() ?? 0)
        flush()
        _ = output.takeAll()
        return problems
    }

    /// The server stops and keeps this host's screens for its restart: each view-model is told
    /// (``ViewModelContext/isKeptForRestart``) before it is disposed.
    @_spi(Transport) public func keepForRestart() {
        for entry in viewModels.values { entry.context.isKeptForRestart = true }
    }
}
