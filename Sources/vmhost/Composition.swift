import EventLoop
import Runtime
import ViewModelHost

/// The composition root: picks the clock and the backend from the options and lists the kinds.
@HostActor
struct Composition {
    let configuration: Host.Configuration

    init(options: ServerOptions) {
        let clock: any HostClock = options.manualClock ? ManualClock() : SystemClock()
        configuration = Host.Configuration(clock: clock, factories: [], testControls: options.testControls)
    }
}
