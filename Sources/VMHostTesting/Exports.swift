// `import VMHostTesting` brings what a test of view-models needs besides the kit itself: what an
// app's kinds and its `main` import (`VMHost`: the runtime, the host, the server), which the kit's
// tests drive.
@_exported import VMHost
