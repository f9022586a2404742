// The framework an app's kinds and its `main` import: `import VMHost` brings the runtime (properties,
// events, inputs, commands, clocks, domain errors, view-model declarations), the JSON values they
// carry, the host that serves them, and the server entry (`Server`) that makes an app's `main`.
@_exported import VMHostCore
@_exported import VMHostEventLoop
@_exported import VMHostJSONRPC
@_exported import VMHostRuntime
@_exported import VMHostWire
// The logger type of `ServerEnvironment.logger`.
@_exported import Logging
