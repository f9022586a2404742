// `import VMHostTesting` brings what a test of view-models needs besides the kit itself: the
// runtime (``ManualClock``, ``ViewModelContext``, inputs and outputs), the JSON values, and the host
// that ``InProcessConnection`` drives.
@_exported import VMHostCore
@_exported import VMHostEventLoop
@_exported import VMHostRuntime
@_exported import VMHostWire
