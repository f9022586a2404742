// The framework an app's kinds and its `main` import: `import VMHost` brings the runtime (properties,
// events, inputs, commands, clocks, domain errors, view-model declarations), the JSON values they
// carry, and the host that serves them.
@_exported import VMHostCore
@_exported import VMHostEventLoop
@_exported import VMHostRuntime
@_exported import VMHostWire
