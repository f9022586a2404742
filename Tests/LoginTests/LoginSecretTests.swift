@_spi(Transport) import VMHostCore
import Foundation
import Testing
@_spi(Transport) import VMHostWire
extension LoginSuites {
    /// The password and the code never leave the host: a whole login session through the real binary,
    /// with `--trace` and `--log-level trace`, then a search of everything it wrote.
    ///
    /// The blocking reads of the child's pipes run on a thread of their own, never on the host actor or
    /// the cooperative pool (which other tests' tasks need to make progress).
    @Suite("Login: secrets")
    struct LoginSecretTests {
        /// Distinctive values, so that finding them anywhere is certainly a leak.
        static let secretPassword = "Zebra-Quartz-4417"
        static let secretCode = "918273"

        @Test func neitherThePasswordNorTheCodeAppearsInAnythingTheHostWrote() async throws {
            try await BinaryHost.onThread(Self.runSessionAndSearch)
        }

        @Sendable static func runSessionAndSearch() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("login-secrets-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let traceURL = directory.appendingPathComponent("trace.ndjson")
            let host = try BinaryHost(
                arguments: ["--clock", "manual", "--test-controls", "--trace", traceURL.path, "--log-level", "trace"],
                stderrURL: directory.appendingPathComponent("stderr.log"))

            func send(_ input: String, _ value: JSON? = nil) throws -> [JSON] {
                var params: JSONObject = ["vm": "l", "input": .string(input)]
                if let value { params["value"] = value }
                return try host.request("vm.send", .object(params))
            }
            func errorCode(_ messages: [JSON]) -> Int64? { messages.last?["error"]?["code"]?.intValue }
            func events(_ messages: [JSON]) -> [JSON] {
                messages.filter { $0["method"] == "vm.event" }.compactMap { $0["params"]?["name"] }
            }

            _ = try host.request("initialize", [:])
            _ = try host.request("vm.create", ["kind": "Login", "id": "l"])
            _ = try host.request("vm.subscribe", ["vm": "l"])

            // Password mode: a wrong (secret) password fails, then the demo password succeeds.
            _ = try send("username", "13800138000")
            _ = try send("password", .string(Self.secretPassword))
            let wrongPassword = try send("submit")
            #expect(errorCode(wrongPassword) == -32004)
            #expect(events(wrongPassword) == ["error"])
            // Secrets sent the wrong way: as a notification, with a wrong type, to an unknown view-model.
            try host.notify("vm.send", ["vm": "l", "input": "password", "value": .string(Self.secretPassword)])
            #expect(errorCode(try host.request("vm.send", ["vm": "nope", "input": "password", "value": .string(Self.secretPassword)])) == -32001)
            #expect(errorCode(try host.request("vm.send", ["vm": "l", "input": "password", "value": [.string(Self.secretPassword)]])) == -32602)
            _ = try send("password", "123456")
            #expect(events(try send("submit")) == ["navigate"])
            // The session is open: this Login refuses another submit; a new one starts the code login.
            _ = try host.request("control.backend.reset", [:])
            _ = try host.request("vm.dispose", ["vm": "l"])
            _ = try host.request("vm.create", ["kind": "Login", "id": "l"])
            _ = try host.request("vm.subscribe", ["vm": "l"])

            // Code mode: send a code, let the countdown run out, a wrong (secret) code fails, the demo code succeeds.
            _ = try send("mode", "code")
            _ = try send("phone", "13912345678")
            #expect(errorCode(try send("sendCode")) == nil)
            _ = try host.request("control.clock.advance", ["ms": 60_000])
            _ = try send("code", .string(Self.secretCode))
            let wrongCode = try send("submit")
            #expect(errorCode(wrongCode) == -32004)
            #expect(events(wrongCode) == ["error"])
            _ = try send("code", "123456")
            #expect(events(try send("submit")) == ["navigate"])
            #expect(try host.finish() == 0)

            let stdout = String(decoding: host.written, as: UTF8.self)
            let stderr = try String(contentsOf: host.stderrURL, encoding: .utf8)
            let trace = try String(contentsOf: traceURL, encoding: .utf8)
            // Everything was really captured: the trace saw every message, the log was on.
            #expect(stdout.contains("\"navigate\""))
            #expect(trace.contains("\"navigate\"") && trace.contains("\"dir\":\"in\"") && trace.contains("\"dir\":\"out\""))
            #expect(stderr.contains("vmhost"))
            for (name, text) in [("stdout", stdout), ("stderr", stderr), ("trace", trace)] {
                #expect(!text.contains(Self.secretPassword), "the password leaked into \(name)")
                #expect(!text.contains(Self.secretCode), "the code leaked into \(name)")
                // The demo password and code, as JSON strings.
                #expect(!text.contains("\"123456\""), "the demo password or code leaked into \(name)")
            }
            // The trace shows that the secrets were sent, masked.
            let sends = try trace.split(separator: "\n").map { try JSON.parse(Array($0.utf8)) }
                .filter { $0["dir"] == "in" && $0["msg"]?["method"] == "vm.send" }
                .compactMap { $0["msg"]?["params"] }
            let secretSends = sends.filter { $0["input"] == "password" || $0["input"] == "code" }
            #expect(secretSends.count == 7)
            #expect(secretSends.allSatisfy { $0["value"] == "***" })
        }
    }
}
