import Backend
import VMHost

extension BackendOption {
    /// Makes the client; the host keeps an ``EmbeddedBackend`` to serve `control.backend.*`.
    /// `demoProductCount` is the embedded backend's catalogue size, `maxResponseBytes` the HTTP
    /// client's body limit and `deviceID` its device id (nil: one for the life of the process); each
    /// kind ignores the other's.
    @HostActor
    public func makeClient(
        clock: any HostClock, timeout: Duration, demoProductCount: Int = DemoCatalog.productCount,
        maxResponseBytes: Int = HTTPAPIClient.defaultMaxResponseBytes, deviceID: String? = nil
    ) -> any APIClient {
        switch self {
        case .embedded: EmbeddedBackend(clock: clock, timeout: timeout, productCount: demoProductCount)
        case .http(let url): HTTPAPIClient(
            baseURL: url, clock: clock, timeout: timeout, maxResponseBytes: maxResponseBytes,
            deviceID: deviceID)
        }
    }
}
