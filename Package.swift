// swift-tools-version: 6.1
// vmhost: every view-model of an app in one Swift process, served over JSON-RPC 2.0 on stdio.
//
// The package is a framework and a reference app built on it:
// - the framework, `Sources/VMHost*`: the products `VMHost` (what an app's kinds and its `main`
//   import), `VMHostTesting` (the test kit), `VMHostHTTP` (the HTTP client an app's kinds call
//   their server with) and `VMHostEmbedding` (the C ABI of
//   Sources/CVMHost/include/vmhost.h, for an app's kinds as a library in a shell's own process);
// - the reference app, `Sources/ReferenceApp/`: the kinds of the seed documents (product list,
//   login, menu groups), their backend, and `vmhost`, which serves them on stdio; the product
//   `ReferenceApp` is the app for another transport, `vmhost-embedded` the app as a library
//   through the C ABI.
//
// This package has one dependency, kept small and pure Swift: swift-log (logging to stderr). A
// package that depends on `VMHost` and `VMHostTesting` resolves it and nothing else. `VMHostHTTP`
// (and the reference app's HTTP backend on it) uses libcurl, loaded with dlopen by the first HTTP
// call (nothing to build, nothing mapped at start-up); `VMHost` builds on it so that its server
// records an app's HTTP exchanges (`--record`) and replays them (`--http-replay`). The WebSocket
// transport, `VMHostWebSocket`, builds on hummingbird and SwiftNIO: its product is here, so that an
// app depends on it by URL and version as on `VMHost`, but those dependencies are guarded by the
// package trait `WebSocket` (SE-0450), which only an app serving browsers enables
// (`.package(url: …, from: …, traits: ["WebSocket"])`): a package that does not enable it resolves
// swift-log alone, and its `VMHostWebSocket` module is empty. Its sources are in
// web/Sources/VMHostWebSocket, beside `vmhost-web` (the reference app served to browsers) and the
// transport's tests, a package of their own in `web/` that enables the trait. No target uses
// unsafe flags, so a package can depend on vmhost by version;
// release tuning (static runtime, lld, no PIE, cross-module optimisation) is applied by
// scripts/build-release.sh. The version is in VERSION.
import PackageDescription

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // A nonisolated async function runs on its caller's executor (the host thread, for every
    // view-model) instead of hopping to the global pool: work a command starts is then on the
    // host thread's queue, where a manual clock and `settle()` see it, so tests stay exact under
    // any load. Work that must leave the host thread says so with `@concurrent`.
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
]

let package = Package(
    name: "vmhost",
    platforms: [.macOS(.v15)],
    products: [
        // The framework.
        .library(name: "VMHost", targets: ["VMHost"]),
        .library(name: "VMHostTesting", targets: ["VMHostTesting"]),
        // The HTTP client an app's kinds call their server with (libcurl, loaded by the first call).
        .library(name: "VMHostHTTP", targets: ["VMHostHTTP"]),
        // The C ABI of include/vmhost.h, for an app's own library of its kinds (docs/Guide-embedding.md).
        .library(name: "VMHostEmbedding", targets: ["VMHostEmbedding"]),
        // The WebSocket transport (docs/Guide.md §7): `WebSocketServer`, with the trait `WebSocket`.
        .library(name: "VMHostWebSocket", targets: ["VMHostWebSocket"]),
        // The reference app.
        .executable(name: "vmhost", targets: ["vmhost"]),
        .library(name: "ReferenceApp", targets: ["AppComposition"]),
        // The reference app in the caller's process: libvmhost-embedded, through include/vmhost.h.
        .library(name: "vmhost-embedded", type: .dynamic, targets: ["ReferenceAppEmbedded"]),
    ],
    traits: [
        .trait(name: "WebSocket", description: "The WebSocket transport, VMHostWebSocket (hummingbird and SwiftNIO)."),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // The WebSocket transport: one host per connection, on a worker's host thread. Every file
        // is inside `#if WebSocket`: without the trait the module is empty and its dependencies
        // but swift-log are left out of the graph.
        .target(
            name: "VMHostWebSocket",
            dependencies: [
                "VMHost",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["WebSocket"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["WebSocket"])),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket", condition: .when(traits: ["WebSocket"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["WebSocket"])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(traits: ["WebSocket"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["WebSocket"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["WebSocket"])),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: .when(traits: ["WebSocket"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "web/Sources/VMHostWebSocket",
            swiftSettings: settings),
        // MARK: The framework, layer by layer; each depends only on the layers below it.

        // Layer 0: the C JSON library (Debian: libjansson-dev).
        .systemLibrary(
            name: "CJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"]), .brew(["jansson"])]
        ),
        // Layer 1: the single host thread and its global actor.
        .target(name: "VMHostEventLoop", swiftSettings: settings),
        // Layer 2: JSON values (parsed and written by jansson), framing, the output queue and writer.
        .target(name: "VMHostWire", dependencies: ["CJansson", "VMHostEventLoop"], swiftSettings: settings),
        // Layer 3: the JSON-RPC 2.0 engine.
        .target(name: "VMHostJSONRPC", dependencies: ["VMHostWire", "VMHostEventLoop"], swiftSettings: settings),
        // Layer 4: properties, events, inputs, commands, activity, clocks, domain errors, view-model declarations.
        .target(name: "VMHostRuntime", dependencies: ["VMHostWire", "VMHostEventLoop"], swiftSettings: settings),
        // Layer 5: the host: registry, subscriptions, delivery, method table.
        .target(
            name: "VMHostCore", dependencies: ["VMHostWire", "VMHostEventLoop", "VMHostJSONRPC", "VMHostRuntime"],
            swiftSettings: settings),
        // Layer 6: what an app imports: the runtime, JSON values, the host actor and the server entry.
        // The host itself (layer 5) is not re-exported: apps never name it.
        .target(
            name: "VMHost",
            dependencies: [
                "VMHostWire", "VMHostEventLoop", "VMHostJSONRPC", "VMHostRuntime", "VMHostCore", "VMHostHTTP",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: settings),
        // A C library opened with dlopen when first needed (libcurl for VMHostHTTP, SQLite for an
        // app's store): a host that never uses it maps none of it.
        .target(name: "VMHostDynamicLibrary", swiftSettings: settings),
        // Typed calls of libcurl's variadic functions (curl_easy_setopt, curl_easy_getinfo) through
        // the pointers VMHostHTTP looked up; it declares the few libcurl types it needs.
        .target(name: "CVMHostCurl"),
        // The HTTP client (product VMHostHTTP): libcurl loaded with dlopen by the first call (Debian:
        // libcurl4; no headers needed to build), deadlines on the host's clock, cancellation that
        // closes the connection. A host that never calls maps none of it.
        .target(
            name: "VMHostHTTP",
            dependencies: ["VMHostWire", "VMHostEventLoop", "VMHostRuntime", "VMHostDynamicLibrary", "CVMHostCurl"],
            swiftSettings: settings),
        // The C ABI: an app's host in the caller's process (Sources/CVMHost/include/vmhost.h, the
        // header; protocol/embedding.md). VMHostEmbedding defines it over EmbeddedHost, except
        // vmhost_open, which an app's library defines in one line naming its server.
        .target(name: "CVMHost"),
        .target(
            name: "VMHostEmbedding",
            dependencies: ["CVMHost", "VMHost", "VMHostEventLoop", .product(name: "Logging", package: "swift-log")],
            swiftSettings: settings),
        // The test kit: the in-process connection, the recorder, the manual clock, a probe kind.
        .target(
            name: "VMHostTesting",
            dependencies: ["VMHostWire", "VMHostEventLoop", "VMHostJSONRPC", "VMHostRuntime", "VMHostCore", "VMHost"],
            swiftSettings: settings
        ),

        // MARK: The reference app: the seed documents' screens on the framework.

        // The backend: the API contract, the HTTP client and the embedded demo backend.
        .target(
            name: "Backend", dependencies: ["VMHost", "VMHostHTTP"],
            path: "Sources/ReferenceApp/Backend", swiftSettings: settings),
        // The backend over HTTP, on the framework's client (VMHostHTTP): the contract's envelope
        // and its errors over it.
        .target(
            name: "HTTPBackend",
            dependencies: ["VMHost", "Backend", "VMHostHTTP"],
            path: "Sources/ReferenceApp/HTTPBackend", swiftSettings: settings),
        // The view-models, one module per screen; pure logic over the backend's API.
        .target(
            name: "ProductList", dependencies: ["VMHost", "Backend"],
            path: "Sources/ReferenceApp/ProductList", swiftSettings: settings),
        .target(
            name: "Login", dependencies: ["VMHost", "Backend"],
            path: "Sources/ReferenceApp/Login", swiftSettings: settings),
        .target(
            name: "MenuGroups", dependencies: ["VMHost", "Backend"],
            path: "Sources/ReferenceApp/MenuGroups", swiftSettings: settings),
        // What the app keeps between runs with --state-dir: SQLite, loaded on first use.
        .target(
            name: "StateStore", dependencies: ["VMHost", "VMHostDynamicLibrary"],
            path: "Sources/ReferenceApp/StateStore", swiftSettings: settings),
        // The reference app as a server (its options, kinds and test controls), for both executables.
        .target(
            name: "AppComposition",
            dependencies: [
                "VMHost", "Backend", "HTTPBackend", "ProductList", "Login", "MenuGroups", "StateStore",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/ReferenceApp/Composition", swiftSettings: settings),
        // The command line the standard library reads, from the C library's initialiser arguments:
        // with the runtime linked statically, its own reads /proc/self/maps at every start-up
        // (ProcessArguments.c).
        .target(name: "ProcessArguments", path: "Sources/ReferenceApp/ProcessArguments"),
        // The C math library loaded by the first call of one of its functions, not at every
        // start-up (LibmOnFirstCall.c).
        .target(name: "LibmOnFirstCall", path: "Sources/ReferenceApp/LibmOnFirstCall"),
        // The executable: the reference app's kinds served on stdio.
        .executableTarget(
            name: "vmhost",
            dependencies: ["VMHost", "AppComposition", "ProcessArguments", "LibmOnFirstCall"],
            path: "Sources/ReferenceApp/vmhost",
            swiftSettings: settings
        ),
        // The library: the reference app's kinds and options through the C ABI (vmhost-embedded).
        .target(
            name: "ReferenceAppEmbedded",
            dependencies: ["VMHost", "VMHostEmbedding", "AppComposition"],
            path: "Sources/ReferenceApp/vmhost-embedded",
            swiftSettings: settings
        ),
        // Test support for the HTTP tests of the framework and of the reference app: the blocking
        // loopback sockets and the request heads their test servers read (no server package).
        .target(name: "LoopbackTesting", path: "Sources/LoopbackTesting", swiftSettings: settings),
        // Test support of the reference app: a loopback HTTP server and API stubs.
        .target(
            name: "BackendTesting", dependencies: ["VMHostTesting", "Backend", "LoopbackTesting"],
            path: "Sources/ReferenceApp/BackendTesting", swiftSettings: settings),

        // MARK: Tools.

        // In-process micro-benchmarks of the JSON layer and of dispatch (bench/run.py, scenario g).
        .executableTarget(
            name: "vmhost-bench", dependencies: ["VMHostWire", "VMHostEventLoop", "VMHostJSONRPC"],
            swiftSettings: settings),
        // Two libFuzzer targets (scripts/test.sh, suite libfuzzer); without -DFUZZING each builds as
        // a replayer of its corpus. FuzzSupport is their shared `main` (libFuzzer's driver, or the
        // replayer).
        .systemLibrary(name: "CLibFuzzer", path: "Sources/CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["VMHostEventLoop", "CLibFuzzer"], swiftSettings: settings),
        // The wire: the frame reader and the JSON-RPC engine, then a whole host through the C ABI
        // (corpus Tests/Hardening/corpus).
        .executableTarget(
            name: "vmhost-fuzz",
            dependencies: ["VMHostWire", "VMHostEventLoop", "VMHostJSONRPC", "VMHost", "VMHostEmbedding", "FuzzSupport"],
            swiftSettings: settings),
        // The backend's response path: body → envelope → models → a ProductList applying a page
        // (corpus Tests/Hardening/backend-corpus). Only the modules on that path.
        .executableTarget(
            name: "vmhost-fuzz-backend",
            dependencies: ["VMHostWire", "VMHostEventLoop", "VMHostRuntime", "Backend", "ProductList", "FuzzSupport"],
            swiftSettings: settings),

        // MARK: Tests.

        .testTarget(name: "WireTests", dependencies: ["VMHostWire"], swiftSettings: settings),
        .testTarget(name: "JSONRPCTests", dependencies: ["VMHostJSONRPC", "VMHostTesting"], swiftSettings: settings),
        .testTarget(name: "RuntimeTests", dependencies: ["VMHostRuntime", "VMHostTesting"], swiftSettings: settings),
        // The authoring surface as an app team uses it: kinds declared by their stored properties.
        .testTarget(name: "AuthoringTests", dependencies: ["VMHostTesting"], swiftSettings: settings),
        // The host's tests, and the check of every kind the host serves against its description
        // (the reference app's kinds included).
        .testTarget(
            name: "ViewModelHostTests",
            dependencies: ["VMHostCore", "VMHostTesting", "ProductList", "Login", "MenuGroups", "BackendTesting"],
            swiftSettings: settings),
        .testTarget(name: "ProductListTests", dependencies: ["ProductList", "VMHostTesting", "BackendTesting"], swiftSettings: settings),
        .testTarget(name: "LoginTests", dependencies: ["Login", "VMHostTesting", "BackendTesting"], swiftSettings: settings),
        .testTarget(name: "MenuGroupsTests", dependencies: ["MenuGroups", "VMHostTesting", "BackendTesting"], swiftSettings: settings),
        .testTarget(name: "BackendTests", dependencies: ["Backend", "HTTPBackend", "VMHostHTTP", "BackendTesting"], swiftSettings: settings),
        // The store, and what the reference app keeps in it (through the composition and a loopback server).
        .testTarget(
            name: "StateStoreTests",
            dependencies: [
                "StateStore", "AppComposition", "Backend", "HTTPBackend", "BackendTesting",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: settings),
        // The HTTP client against a loopback server of its own (real sockets, a manual clock).
        .testTarget(
            name: "VMHostHTTPTests", dependencies: ["VMHostHTTP", "VMHost", "VMHostTesting", "LoopbackTesting"],
            swiftSettings: settings),
        // An app's host in process: the Swift entry (EmbeddedHost).
        .testTarget(name: "EmbeddingTests", dependencies: ["VMHost", "VMHostTesting"], swiftSettings: settings),
        // The C math functions the vmhost executable defines in place of libm's, against libm's.
        .testTarget(name: "LibmOnFirstCallTests", dependencies: ["LibmOnFirstCall"], swiftSettings: settings),
    ]
)
