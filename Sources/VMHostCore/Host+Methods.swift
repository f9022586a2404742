@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
import VMHostRuntime
@_spi(Transport) import VMHostWire

extension Host {
    /// The method table of protocol version 1 (protocol/SPEC.md, "Methods").
    func registerMethods() {
        engine.registerSync("initialize") { [unowned self] call throws(RPCError) in try self.initialize(call) }
        engine.registerSync("ping") { call throws(RPCError) in _ = try call.params(allowing: []); return [:] }
        engine.registerSync("host.describe") { [unowned self] call throws(RPCError) in try self.describeMethod(call) }
        engine.register("vm.create") { [unowned self] call in
            do throws(RPCError) {
                switch try self.create(call) {
                case .text(let text): call.succeed(text: text)
                case .value(let value): call.succeed(value)
                }
            } catch {
                call.fail(error)
            }
        }
        engine.registerSync("vm.dispose") { [unowned self] call throws(RPCError) in try self.dispose(call) }
        engine.registerSync("vm.list") { [unowned self] call throws(RPCError) in _ = try call.params(allowing: []); return self.list() }
        engine.registerSync("vm.get") { [unowned self] call throws(RPCError) in try self.get(call) }
        engine.register("vm.send") { [unowned self] call in self.send(call) }
        engine.registerSync("vm.subscribe") { [unowned self] call throws(RPCError) in try self.subscribe(call) }
        engine.registerSync("vm.unsubscribe") { [unowned self] call throws(RPCError) in try self.unsubscribe(call) }
        engine.registerSync("shutdown") { [unowned self] call throws(RPCError) in
            _ = try call.params(allowing: [])
            self.cancelEverything(except: call)
            self.hasShutDown = true
            self.engine.isShutDown = true
            return .null
        }
        engine.register("exit") { [unowned self] call in
            call.succeed(.null)
            self.flush()
            self.onExit?(self.hasShutDown ? 0 : 1)
        }
        if configuration.testControls {
            engine.registerSync("control.clock.advance") { [unowned self] call throws(RPCError) in try self.advanceClock(call) }
            engine.register("control.output.pause") { [unowned self] call in self.pauseOutput(call, paused: true) }
            engine.register("control.output.resume") { [unowned self] call in self.pauseOutput(call, paused: false) }
            for method in configuration.controlMethods { engine.register(method.name, method.handler) }
        }
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
