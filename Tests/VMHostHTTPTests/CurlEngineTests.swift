@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import Testing
@testable import VMHostHTTP

/// The client where libcurl cannot be loaded: every call fails as `unavailable` saying libcurl is
/// missing, the first and the later ones, and nothing traps.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct CurlEngineTests {
    @Test func everyCallFailsAsUnavailableNamingLibcurlWhenItIsMissing() async {
        let engine = CurlEngine(libraryNames: ["libcurl-not-installed.so.4"])
        let client = HTTPClient(
            baseURL: HTTPURL("http://127.0.0.1:9")!, clock: ManualClock(), timeout: .seconds(15),
            maxResponseBytes: 1024, headers: [:], redirects: .none, failures: DefaultHTTPFailures(), engine: engine)
        for _ in 0..<3 {
            let error = await #expect(throws: HTTPError.self) { _ = try await client.send(HTTPRequest(.get, "/products")) }
            #expect(error == HTTPError.libcurlMissing)
            #expect(error?.detail.contains("libcurl") == true)
        }
    }

    @Test func aLibraryThatDoesNotExistIsNotLoaded() {
        guard case .failure(let error) = CurlLibrary.load(names: ["libcurl-not-installed.so.4"]) else {
            Issue.record("a library that does not exist was loaded")
            return
        }
        #expect(error.kind == .unavailable)
    }

    /// The transport's failures, from libcurl's `CURLcode`s.
    @Test func curlCodesMapToKinds() {
        #expect(HTTPError(curlCode: 6, maxResponseBytes: 1).kind == .hostNotFound)
        #expect(HTTPError(curlCode: 7, maxResponseBytes: 1).kind == .cannotConnect)
        for code: Int32 in [18, 52, 55, 56] { #expect(HTTPError(curlCode: code, maxResponseBytes: 1).kind == .connectionLost) }
        for code: Int32 in [35, 60] { #expect(HTTPError(curlCode: code, maxResponseBytes: 1).kind == .secureConnectionFailed) }
        #expect(HTTPError(curlCode: 28, maxResponseBytes: 1).kind == .timedOut)
        #expect(HTTPError(curlCode: 63, maxResponseBytes: 1024) == HTTPError(.responseTooLarge, "the response body is larger than the limit of 1024 bytes"))
        #expect(HTTPError(curlCode: 9999, maxResponseBytes: 1).kind == .failed)
    }
}
