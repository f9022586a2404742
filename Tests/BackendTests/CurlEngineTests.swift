import Backend
@testable import HTTPBackend
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import Testing

/// The HTTP client's engine where libcurl cannot be loaded: every call fails as `network` saying
/// libcurl is missing, the first and the later ones, and nothing traps.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct CurlEngineTests {
    static func transfer() -> CurlTransfer {
        CurlTransfer(
            url: "http://127.0.0.1:9/products", method: "GET", headers: ["Accept: application/json"], body: nil,
            maxResponseBytes: 1024, backstopMilliseconds: 30_000)
    }

    @Test func everyCallFailsAsNetworkNamingLibcurlWhenItIsMissing() async {
        let engine = CurlEngine(libraryNames: ["libcurl-not-installed.so.4"])
        for _ in 0..<3 {
            guard case .failure(let error) = await Self.transfer().run(on: engine) else {
                Issue.record("a call succeeded without libcurl")
                return
            }
            #expect(error as? BackendError == HTTPErrorMapping.libcurlMissing)
            #expect((error as? BackendError)?.detail.contains("libcurl") == true)
        }
    }
}
