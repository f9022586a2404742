@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
import VMHostRuntime
@_spi(Transport) import VMHostWire

extension Host {
    /// The method table of protocol version 1 (protocol/SPEC.md, "Methods"), built once and
    /// shared by every host: each handler is given the host of the engine that received the call.
    /// With `testControls`, the `control.*` methods too (``registerControls()`` adds the app's).
    static func methodTable(testControls: Bool) -> RPCEngine.MethodTable {
        testControls ? methodTableWithControls : protocolMethodTable
    }

    private static let protocolMethodTable: RPCEngine.MethodTable = {
        var table = RPCEngine.MethodTable()
        table.registerSync("initialize") { engine, call throws(RPCError) in try host(engine).initialize(call) }
        table.registerSync("ping") { _, call throws(RPCError) in _ = try call.params(allowing: []); return [:] }
        table.registerSync("host.describe") { engine, call throws(RPCError) in try host(engine).describeMethod(call) }
        table.register("vm.create") { engine, call in
            do throws(RPCError) {
                switch try host(engine).create(call) {
                case .text(let text): call.succeed(text: text)
                case .value(let value): call.succeed(value)
                }
            } catch {
                call.fail(error)
            }
        }
        table.registerSync("vm.dispose") { engine, call throws(RPCError) in try host(engine).dispose(call) }
        table.registerSync("vm.list") { engine, call throws(RPCError) in
            _ = try call.params(allowing: [])
            return host(engine).list()
        }
        table.registerSync("vm.get") { engine, call throws(RPCError) in try host(engine).get(call) }
        table.register("vm.send") { engine, call in host(engine).send(call) }
        table.registerSync("vm.subscribe") { engine, call throws(RPCError) in try host(engine).subscribe(call) }
        table.registerSync("vm.unsubscribe") { engine, call throws(RPCError) in try host(engine).unsubscribe(call) }
        table.registerSync("shutdown") { engine, call throws(RPCError) in
            _ = try call.params(allowing: [])
            let host = host(engine)
            host.cancelEverything(except: call)
            host.hasShutDown = true
            engine.isShutDown = true
            return .null
        }
        table.register("exit") { engine, call in
            let host = host(engine)
            call.succeed(.null)
            host.flush()
            host.onExit?(host.hasShutDown ? 0 : 1)
        }
        return table
    }()

    private static let methodTableWithControls: RPCEngine.MethodTable = {
        var table = protocolMethodTable
        table.registerSync("control.clock.advance") { engine, call throws(RPCError) in try host(engine).advanceClock(call) }
        table.register("control.output.pause") { engine, call in host(engine).pauseOutput(call, paused: true) }
        table.register("control.output.resume") { engine, call in host(engine).pauseOutput(call, paused: false) }
        return table
    }()

    /// The host `engine` works for: every engine made with ``methodTable(testControls:)`` is a
    /// host's, its ``RPCEngine/owner`` set in ``init(configuration:)``.
    private static func host(_ engine: RPCEngine) -> Host {
        unsafeDowncast(engine.owner.unsafelyUnwrapped, to: Host.self)
    }

    /// Registers the app's own test-control methods (``Configuration/controlMethods``), served
    /// only with ``Configuration/testControls``.
    func registerControls() {
        guard configuration.testControls else { return }
        for method in configuration.controlMethods { engine.register(method.name, method.handler) }
    }

    /// The methods this host serves, sorted (checked against protocol/openrpc.json by the tests).
    package var methodNames: [String] { engine.methodNames }

    func initialize(_ call: Call) throws(RPCError) -> JSON {
        let params = try call.params(allowing: ["protocolVersion", "clientInfo", "locale"])
        if let version = try params.optionalValue("protocolVersion", as: String.self), version != "1" {
            throw RPCError.invalidParams("params.protocolVersion: this host speaks protocol version \"1\", not \"\(version)\"")
        }
        _ = try params.optionalValue("clientInfo", as: JSONObject.self)
        if let tag = try params.optionalValue("locale", as: String.self) {
            guard let chosen = AppLocale.match(tag, in: configuration.locales) else {
                let supported = configuration.locales.map(\.tag).joined(separator: ", ")
                throw RPCError.invalidParams("params.locale: unsupported locale \"\(tag)\" (supported: \(supported))")
            }
            locale = chosen
        }
        return [
            "protocolVersion": "1",
            "serverInfo": ["name": .string(configuration.serverName), "version": .string(configuration.serverVersion)],
            "kinds": .array(kindNames.map { .string($0) }),
            "locale": .string(locale.tag),
        ]
    }

    func describeMethod(_ call: Call) throws(RPCError) -> JSON {
        let params = try call.params(allowing: ["kind"])
        if let kind = try params.optionalValue("kind", as: String.self) {
            guard let description = describe(kind: kind) else { throw unknownKind(kind) }
            return ["protocolVersion": "1", "kinds": [description]]
        }
        return ["protocolVersion": "1", "kinds": .array(kindNames.compactMap { describe(kind: $0) })]
    }

    /// `control.output.pause` / `control.output.resume` (SPEC §4, "Slow clients"; §9): the output
    /// is held as for a client that stopped reading, so merging is deterministic. The hold starts
    /// right after the reply that answers `pause`: its own, or its batch's array; the reply to
    /// `resume` is written after everything held.
    func pauseOutput(_ call: Call, paused: Bool) {
        do throws(RPCError) {
            _ = try call.params(allowing: [])
        } catch {
            call.fail(error)
            return
        }
        if paused {
            // The reply writes the changes made so far first (rule 3): none is held.
            call.succeed([:])
            call.afterReply { [output] in output.pause() }
        } else {
            flush()
            output.resume()
            call.succeed([:])
        }
    }

    func advanceClock(_ call: Call) throws(RPCError) -> JSON {
        let params = try call.params(allowing: ["ms"])
        let ms = try params.value("ms", as: Int64.self)
        guard ms >= 0 else { throw RPCError.invalidParams("params.ms: must be 0 or more, got \(ms)") }
        guard let clock = configuration.clock as? ManualClock else {
            throw RPCError.invalidParams("control.clock.advance needs a manual clock (start the host with --clock manual)")
        }
        // Checked against the clock's ceiling (SPEC §9): refused whole, the clock unchanged.
        let remaining = clock.remaining.milliseconds
        guard ms <= remaining else {
            throw RPCError.invalidParams(
                "params.ms: the manual clock stops at \(ManualClock.ceilingMilliseconds) ms; from now (\(clock.now.milliseconds) ms) it can move at most \(remaining) ms")
        }
        flush()
        clock.advance(by: .milliseconds(ms))
        return ["now": .int(clock.now.milliseconds)]
    }
}
