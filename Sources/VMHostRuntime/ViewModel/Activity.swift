import VMHostEventLoop
import VMHostWire

/// A view-model's in-flight counter (ActivityIndicator): ``isActive`` is `count > 0`.
@HostActor
public final class ActivityCounter {
    public private(set) var count = 0 {
        didSet { isActive.value = count > 0 }
    }
    /// True while at least one tracked operation runs. Bind an output to it (`loading`).
    public let isActive = Property("activity", false)

    init() {}

    /// Counts `operation` as in flight until it ends, however it ends (cancellation included).
    public func track<T>(_ operation: @HostActor () async throws -> T) async throws -> T {
        count += 1
        defer { count -= 1 }
        return try await operation()
    }
}
