import VMHostEventLoop
import VMHostWire

/// A view-model's in-flight counter (ActivityIndicator): the runs of its commands and works whose
/// bodies have started and not ended. ``isActive`` is `count > 0`.
@HostActor
final class ActivityCounter {
    private(set) var count = 0
    /// True while at least one run counts.
    let isActive = Property(false)

    func add(_ delta: Int) {
        count += delta
        isActive.set(count > 0)
    }
}
