// The framework an app's kinds and its `main` import: `import VMHost` brings the runtime (properties,
// events, inputs, commands, clocks, domain errors, view-model declarations), the JSON values they
// carry, the host actor and its waiter, and the server entry (`Server`) that makes an app's `main`.
// What these modules declare beyond that is `package` (the framework's own) or `@_spi(Transport)`
// (for a transport in another package, such as the WebSocket one in web/).
@_exported import VMHostEventLoop
// `RPCError`, what a test control throws.
@_exported import VMHostJSONRPC
@_exported import VMHostRuntime
@_exported import VMHostWire
// The logger type of `ServerEnvironment.logger`.
@_exported import Logging
