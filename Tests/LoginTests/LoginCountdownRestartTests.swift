import Backend
import BackendTesting
import Login
import Testing
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
@_spi(Transport) import VMHostWire

extension LoginSuites {
    /// The SMS countdown across restarts (`--state-dir`, through ``CooldownStorage``): each run is
    /// an in-process host with its own manual clock, the storage is what the runs share.
    @Suite(.timeLimit(.minutes(1)))
    @HostActor
    struct LoginCountdownRestartTests {
        let storage = MemoryCooldownStorage()

        /// One run of the app: a manual clock whose wall time starts `wallOffset` after the default
        /// origin, a cooldown on `storage`, and a host serving `Login`.
        func run(wallOffset: Duration = .zero) -> (InProcessConnection, ManualClock) {
            let clock = ManualClock(wallOrigin: ManualClock.defaultWallOrigin + wallOffset)
            let cooldown = SMSCodeCooldown(storage: storage, clock: clock)
            let backend = EmbeddedBackend(clock: clock)
            return (InProcessConnection(kinds: [LoginViewModel.factory(api: backend, cooldown: cooldown)], clock: clock), clock)
        }

        func codeLogin(_ client: InProcessConnection, id: String) async {
            await client.request("vm.create", ["kind": "Login", "args": ["mode": "code"], "id": .string(id)])
            await client.request("vm.send", ["vm": .string(id), "input": "phone", "value": .string(Demo.phone)])
        }

        func values(_ client: InProcessConnection, _ id: String) async -> JSON? {
            await client.request("vm.get", ["vm": .string(id), "outputs": ["countdown", "canSendCode"]]).result?["values"]
        }

        @Test func aSendStoresTheWallClockDeadline() async throws {
            let (client, clock) = run()
            await clock.advance(by: .seconds(5))
            await codeLogin(client, id: "a")
            #expect(await client.request("vm.send", ["vm": "a", "input": "sendCode"]).errorCode == nil)
            #expect(storage.deadlines == [Demo.phone: ManualClock.defaultWallOrigin + .seconds(65)])
        }

        @Test func aRestartShowsWhatIsLeftAndRefusesAnImmediateResend() async throws {
            do {
                let (client, _) = run()
                await codeLogin(client, id: "a")
                #expect(await client.request("vm.send", ["vm": "a", "input": "sendCode"]).errorCode == nil)
            }
            // The next run starts 25 s later on the wall clock.
            let (client, clock) = run(wallOffset: .seconds(25))
            await codeLogin(client, id: "b")
            #expect(await values(client, "b") == ["countdown": 35, "canSendCode": false])
            #expect(await client.request("vm.send", ["vm": "b", "input": "sendCode"]).errorCode == -32003)
            await clock.advance(by: .seconds(35))
            #expect(await values(client, "b") == ["countdown": 0, "canSendCode": true])
            #expect(await client.request("vm.send", ["vm": "b", "input": "sendCode"]).errorCode == nil)
        }

        @Test func aPassedDeadlineIsIgnoredAndOneTooFarCountsAsOnePeriod() async throws {
            storage.deadlines = [
                Demo.phone: ManualClock.defaultWallOrigin - .seconds(1),
                "13800138000": ManualClock.defaultWallOrigin + .seconds(3600),
            ]
            let (client, _) = run()
            await codeLogin(client, id: "a")
            #expect(await values(client, "a") == ["countdown": 0, "canSendCode": true])
            await client.request("vm.create", ["kind": "Login", "args": ["mode": "code"], "id": "b"])
            await client.request("vm.send", ["vm": "b", "input": "phone", "value": "13800138000"])
            #expect(await values(client, "b") == ["countdown": 60, "canSendCode": false])
        }

        @Test func withoutStorageARestartForgets() async throws {
            let clock = ManualClock()
            let first = InProcessConnection(kinds: [LoginViewModel.factory(api: EmbeddedBackend(clock: clock))], clock: clock)
            await codeLogin(first, id: "a")
            #expect(await first.request("vm.send", ["vm": "a", "input": "sendCode"]).errorCode == nil)
            let second = InProcessConnection(kinds: [LoginViewModel.factory(api: EmbeddedBackend(clock: clock))], clock: clock)
            await codeLogin(second, id: "b")
            #expect(await values(second, "b") == ["countdown": 0, "canSendCode": true])
        }
    }
}

/// A ``CooldownStorage`` in memory: what two runs of a test share.
@HostActor
final class MemoryCooldownStorage: CooldownStorage {
    var deadlines: [String: Duration] = [:]

    func savedCooldowns() -> [String: Duration] { deadlines }

    func saveCooldowns(_ deadlines: [String: Duration]) { self.deadlines = deadlines }
}
