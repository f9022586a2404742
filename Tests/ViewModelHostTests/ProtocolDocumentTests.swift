@_spi(Transport) import VMHostEventLoop
import Foundation
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
@_spi(Transport) @testable import VMHostCore

/// protocol/openrpc.json must describe exactly the methods the host serves.
@Suite("Protocol document")
struct ProtocolDocumentTests {
    static let document = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("protocol/openrpc.json")

    @Test func theOpenRPCDocumentListsEveryServedMethodAndNoOther() async throws {
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        let documented = Set((try JSON.parse(text))["methods"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
        let client = await InProcessConnection(kinds: [ProbeViewModel.factory()])
        let served = await Set(MethodNames.of(client))
        // The backend's controls are added by the executable with the embedded backend.
        let backendControls: Set = ["control.backend.script", "control.backend.latency", "control.backend.reset"]
        #expect(served.subtracting(documented).isEmpty, "served but not documented: \(served.subtracting(documented))")
        #expect(documented.subtracting(served).subtracting(backendControls).isEmpty,
                "documented but not served: \(documented.subtracting(served))")
    }
}

enum MethodNames {
    @HostActor static func of(_ client: InProcessConnection) -> [String] { client.host.methodNames }
}
