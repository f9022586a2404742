@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
import VMHostRuntime
@_spi(Transport) import VMHostWire

extension Host {
    /// The view-model named by `params.vm`, or -32001.
    func viewModel(_ params: JSONReader) throws(RPCError) -> Entry {
        let handle = try params.value("vm", as: String.self)
        guard let entry = viewModels[handle] else {
            throw RPCError(
                code: RPCError.unknownViewModelCode, message: "Unknown view-model \"\(handle)\"",
                data: ["vm": .string(handle)])
        }
        return entry
    }

    func unknownOutput(_ name: String, of entry: Entry) -> RPCError {
        let names = entry.context.properties.map(\.name) + entry.context.events.map(\.name)
        return RPCError(
            code: RPCError.unknownMemberCode,
            message: "Unknown output \"\(name)\" of \(entry.kind) (outputs: \(names.joined(separator: ", ")))",
            data: ["vm": .string(entry.handle), "output": .string(name)])
    }

    func unknownInput(_ name: String, of entry: Entry) -> RPCError {
        let names = entry.context.inputs.map(\.name)
        return RPCError(
            code: RPCError.unknownMemberCode,
            message: "Unknown input \"\(name)\" of \(entry.kind) (inputs: \(names.joined(separator: ", ")))",
            data: ["vm": .string(entry.handle), "input": .string(name)])
    }

    /// The description of a kind, made once.
    func describe(kind: String) -> JSON? { described(kind: kind)?.description }

    /// The description of a kind and the text of its inputs and outputs, made once.
    func described(kind: String) -> DescribedKind? {
        if let cached = describedKinds[kind] { return cached }
        guard let factory = catalog[kind] else { return nil }
        var description = factory.describe()
        if let kinds = configuration.errorKinds {
            description = description.replacing(DomainError.jsonSchema, with: DomainError.jsonSchema(kinds: kinds))
        }
        let described = SharedDescriptions.shared(description, kind: kind)
        describedKinds[kind] = described
        return described
    }

    /// The redaction rules for this host's messages (traces, logs): the inputs its kinds declare,
    /// secret or not, and the app's further secret member names.
    public func redaction(secretMembers: Set<String> = []) -> Redaction {
        var secret: Set<String> = []
        var plain: Set<String> = []
        for kind in kindNames {
            guard case .object(let description)? = describe(kind: kind), case .array(let inputs)? = description["inputs"]
            else { continue }
            for case .object(let input) in inputs {
                guard case .string(let name)? = input["name"] else { continue }
                if input["secret"] == true { secret.insert(name) } else { plain.insert(name) }
            }
        }
        return Redaction(plainInputs: plain, secretInputs: secret, secretMembers: secretMembers)
    }

    var kindNames: [String] { configuration.factories.map(\.kind) }

    func unknownKind(_ kind: String) -> RPCError {
        .invalidParams("params.kind: unknown kind \"\(kind)\" (kinds: \(kindNames.joined(separator: ", ")))")
    }

    // MARK: vm.create / dispose / list / get

    func create(_ call: Call) throws(RPCError) -> CreatedResult {
        let params = try call.params(allowing: ["kind", "args", "id"])
        let kind = try params.value("kind", as: String.self)
        guard let factory = catalog[kind] else { throw unknownKind(kind) }
        let requested = try params.optionalValue("id", as: String.self)
        let handle: String
        if let requested {
            guard !requested.isEmpty else { throw RPCError.invalidParams("params.id: must not be empty") }
            guard viewModels[requested] == nil else {
                throw RPCError.invalidParams("params.id: a view-model with handle \"\(requested)\" already exists")
            }
            handle = requested
        } else {
            repeat {
                nextHandle += 1
            } while viewModels["vm\(nextHandle)"] != nil
            handle = "vm\(nextHandle)"
        }
        try admitViewModel()
        let context = ViewModelContext(handle: handle, kind: kind, clock: configuration.clock, locale: locale)
        context.lookup = { [unowned self] in self.viewModels[$0]?.instance }
        let instance: AnyObject
        do throws(JSONDecodingError) {
            instance = try factory.make(args: params.object["args"], context: context)
        } catch {
            context.dispose()
            throw RPCError(error)
        }
        context.observer = self
        viewModels[handle] = Entry(
            handle: handle, kind: kind, context: context, instance: instance, args: keepsScreens ? params.object["args"] : nil)
        creationOrder.append(handle)
        return createdResult(handle: handle, kind: kind)
    }

    /// `{vm, kind, inputs, outputs}`, the kind's inputs and outputs written once per kind (the
    /// same text as the values written for each call).
    private func createdResult(handle: String, kind: String) -> CreatedResult {
        guard let described = described(kind: kind), let members = described.membersText else {
            let description = describe(kind: kind)
            return .value([
                "vm": .string(handle), "kind": .string(kind),
                "inputs": description?["inputs"] ?? [], "outputs": description?["outputs"] ?? [],
            ])
        }
        var text = JSONObjectText(capacity: members.inputs.count + members.outputs.count + handle.utf8.count + kind.utf8.count + 48)
        text.append("vm", .string(handle))
        text.append("kind", .string(kind))
        text.append("inputs", text: members.inputs)
        text.append("outputs", text: members.outputs)
        return .text(text.finish())
    }

    /// What `vm.create` answers: written already, or a value to write.
    enum CreatedResult {
        case text([UInt8])
        case value(JSON)
    }

    func dispose(_ call: Call) throws(RPCError) -> JSON {
        let check = remove(try viewModel(try call.params(allowing: ["vm"])))
        if let problem = check.problem { log?(problem) }
        return [:]
    }

    /// Disposes and forgets a view-model; the check verifies, once the entry is dropped, that
    /// nothing it declared keeps it alive (debug builds).
    private func remove(_ entry: Entry) -> ReleaseCheck {
        flush(handle: entry.handle)
        entry.context.dispose()
        for id in entry.subscriptions { endSubscription(id) }
        viewModels[entry.handle] = nil
        creationOrder.removeAll { $0 == entry.handle }
        dirty[entry.handle] = nil
        dirtyOrder.removeAll { $0 == entry.handle }
        return entry.context.releaseCheck()
    }

    func list() -> JSON {
        .array(creationOrder.compactMap { handle in
            viewModels[handle].map { ["vm": .string($0.handle), "kind": .string($0.kind)] }
        })
    }

    func get(_ call: Call) throws(RPCError) -> JSON {
        let params = try call.params(allowing: ["vm", "outputs"])
        let entry = try viewModel(params)
        let names = try params.optionalValue("outputs", as: [String].self)
        var values = JSONObject()
        if let names {
            for name in names {
                guard let property = entry.context.property(named: name) else {
                    if entry.context.event(named: name) != nil {
                        throw RPCError(
                            code: RPCError.unknownMemberCode,
                            message: "\"\(name)\" of \(entry.kind) is an event: events have no current value (subscribe to receive them)",
                            data: ["vm": .string(entry.handle), "output": .string(name)])
                    }
                    throw unknownOutput(name, of: entry)
                }
                values[name] = property.json
            }
        } else {
            for property in entry.context.properties { values.append(property.name, property.json) }
        }
        return ["values": .object(values)]
    }

    // MARK: vm.send

    /// The params of `vm.send`: a set made once, not at every send.
    private static let sendParams: Set<String> = ["vm", "input", "value"]

    func send(_ call: Call) {
        do throws(RPCError) {
            let params = try call.params(allowing: Self.sendParams)
            let entry = try viewModel(params)
            let name = try params.value("input", as: String.self)
            guard let input = entry.context.input(named: name) else { throw unknownInput(name, of: entry) }
            let value = params.object["value"] ?? .null
            if let synchronous = input.asSynchronous {
                let outcome = try refusals(of: name) { () throws(InputError) in try synchronous.send(value) }
                if keepsScreens, input.kind == .value { keep(value, of: input, in: entry.handle) }
                call.respond(Self.reply(for: outcome))
            } else if let command = input as? any AnyCommand {
                guard !isStopping else { throw RPCError.stopping }
                try admitCommand()
                let execution = try refusals(of: name) { () throws(InputError) in
                    try command.execute(value) { outcome in call.respond(Self.reply(for: outcome)) }
                }
                if !execution.isFinished {
                    call.onCancel { execution.cancel() }
                    track(execution)
                }
            }
        } catch {
            call.fail(error)
        }
    }

    /// Runs a send to the input `name`, its refusal answered as the error it is on the wire.
    func refusals<T>(of name: String, _ body: () throws(InputError) -> T) throws(RPCError) -> T {
        do throws(InputError) { return try body() } catch { throw rpcError(error, input: name) }
    }

    func rpcError(_ error: InputError, input: String) -> RPCError {
        switch error {
        case .invalidValue(let decoding):
            return RPCError(decoding)
        case .refused(let path, let reason):
            // The reason is the app's, in the view-model's locale: given apart, as -32003 gives its own.
            return RPCError(
                code: RPCError.invalidParamsCode, message: "Invalid params: \(error.message)",
                data: ["input": .string(input), "path": .string(path), "reason": .string(reason)])
        case .disabled(let reason):
            return RPCError(
                code: RPCError.inputDisabledCode, message: "Input \"\(input)\" is disabled: \(reason)",
                data: ["input": .string(input), "reason": .string(reason)])
        }
    }

    static func reply(for outcome: CommandOutcome) -> Result<JSON, RPCError> {
        switch outcome {
        case .succeeded(let value):
            return .success(value.map { ["value": $0] } ?? [:])
        case .failed(let error):
            return .failure(RPCError(
                code: RPCError.commandFailedCode, message: "Command failed: \(error.kind): \(error.message)",
                data: error.json))
        case .cancelled:
            return .failure(.requestCancelled)
        case .crashed(let detail):
            return .failure(.internalError(detail))
        }
    }
}

/// A kind's description, and the text of its `inputs` and `outputs` as `vm.create` writes them.
struct DescribedKind {
    let description: JSON
    /// The JSON text of the description's `inputs` and `outputs` arrays; nil when either cannot be
    /// written (`vm.create` then writes the values, and answers the error that writing gives).
    let membersText: (inputs: [UInt8], outputs: [UInt8])?

    init(_ description: JSON) {
        self.description = description
        do throws(JSONSerializationError) {
            membersText = (
                try (description["inputs"] ?? []).serializedOrThrow(), try (description["outputs"] ?? []).serializedOrThrow()
            )
        } catch {
            membersText = nil
        }
    }
}

/// The descriptions of kinds, shared by the hosts of a process. A process that serves many
/// connections (WebSocket) has a host per connection, each describing the same kinds: a description
/// equal to one already made is replaced by it, so that every host holds the one copy (several
/// kilobytes a kind, its text as much again) instead of its own. At most ``maxVariants`` different
/// descriptions of a kind are kept; a further one is still used, just not shared.
@HostActor
enum SharedDescriptions {
    static let maxVariants = 4
    private static var byKind: [String: [DescribedKind]] = [:]

    /// `description`, or an equal one made earlier for `kind`, with its text.
    static func shared(_ description: JSON, kind: String) -> DescribedKind {
        var variants = byKind[kind] ?? []
        for variant in variants where variant.description == description { return variant }
        let described = DescribedKind(description)
        if variants.count < maxVariants {
            variants.append(described)
            byKind[kind] = variants
        }
        return described
    }

    /// The descriptions of `kind` kept (tests).
    static func variantCount(kind: String) -> Int { byKind[kind]?.count ?? 0 }
}
