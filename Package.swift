// swift-tools-version: 6.0
// vmhost: every view-model of an app in one Swift process, served over JSON-RPC 2.0 on stdio.
//
// The package is a framework and a reference app built on it:
// - the framework, `Sources/VMHost*`: the products `VMHost` (what an app's kinds and its `main`
//   import), `VMHostTesting` (the test kit) and `VMHostWebSocket` (the same protocol to browsers);
// - the reference app, `Sources/ReferenceApp/`: the kinds of the seed documents (product list,
//   login, menu groups), their backend, and the executables that serve them: `vmhost` on stdio,
//   `vmhost-web` over WebSocket with the web demo.
//
// The framework's stdio host has one dependency, kept small and pure Swift: swift-log (logging to
// stderr). The reference app's HTTP backend uses libcurl, loaded with dlopen by the first HTTP call
// (nothing to build, nothing mapped at start-up), and the WebSocket transport builds on hummingbird
// and hummingbird-websocket (SwiftNIO), which the library products do not pull in. No target uses unsafe
// flags, so a package can depend on vmhost by version; release tuning (static runtime, lld, no PIE,
// cross-module optimisation) is applied by scripts/build-release.sh.
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
        .library(name: "VMHostWebSocket", targets: ["VMHostWebSocket"]),
        // The reference app.
        .executable(name: "vmhost", targets: ["vmhost"]),
        .executable(name: "vmhost-web", targets: ["vmhost-web"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // The WebSocket transport only (VMHostWebSocket, vmhost-web); the stdio vmhost links none of it.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
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
        // Layer 6: what an app imports: the runtime and the host, and the server entry.
        .target(
            name: "VMHost",
            dependencies: [
                "VMHostWire", "VMHostEventLoop", "VMHostJSONRPC", "VMHostRuntime", "VMHostCore",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: settings),
        // The WebSocket transport: one Host per connection, on the host thread (a library, so that an
        // app can serve its kinds to browsers too).
        .target(
            name: "VMHostWebSocket",
            dependencies: [
                "VMHost", "VMHostWire", "VMHostEventLoop", "VMHostJSONRPC", "VMHostCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
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
            name: "Backend", dependencies: ["VMHostWire", "VMHostEventLoop", "VMHostRuntime"],
            path: "Sources/ReferenceApp/Backend", swiftSettings: settings),
        // A C library opened with dlopen when first needed (libcurl, SQLite), for the two below.
        .target(name: "DynamicLibrary", path: "Sources/ReferenceApp/DynamicLibrary", swiftSettings: settings),
        // The backend over HTTP, on libcurl loaded with dlopen by the first call (Debian: libcurl4; no
        // headers needed to build): a host that never calls maps none of it.
        .target(
            name: "HTTPBackend",
            dependencies: ["VMHostWire", "VMHostEventLoop", "VMHostRuntime", "Backend", "CCurlShim", "DynamicLibrary"],
            path: "Sources/ReferenceApp/HTTPBackend", swiftSettings: settings),
        // Typed calls of libcurl's variadic functions (curl_easy_setopt, curl_easy_getinfo) through
        // the pointers the HTTP backend looked up; it declares the few libcurl types it needs.
        .target(name: "CCurlShim", path: "Sources/ReferenceApp/CCurlShim"),
        // The view-models, one module per screen; pure logic over the backend's API.
        .target(
            name: "ProductList", dependencies: ["VMHostWire", "VMHostEventLoop", "VMHostRuntime", "Backend"],
            path: "Sources/ReferenceApp/ProductList", swiftSettings: settings),
        .target(
            name: "Login", dependencies: ["VMHostWire", "VMHostEventLoop", "VMHostRuntime", "Backend"],
            path: "Sources/ReferenceApp/Login", swiftSettings: settings),
        .target(
            name: "MenuGroups", dependencies: ["VMHostWire", "VMHostEventLoop", "VMHostRuntime", "Backend"],
            path: "Sources/ReferenceApp/MenuGroups", swiftSettings: settings),
        // What the app keeps between runs with --state-dir: SQLite, loaded on first use.
        .target(
            name: "StateStore", dependencies: ["VMHostEventLoop", "DynamicLibrary"],
            path: "Sources/ReferenceApp/StateStore", swiftSettings: settings),
        // The reference app as a server (its options, kinds and test controls), for both executables.
        .target(
            name: "AppComposition",
            dependencies: [
                "VMHost", "Backend", "HTTPBackend", "ProductList", "Login", "MenuGroups", "StateStore",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/ReferenceApp/Composition", swiftSettings: settings),
        // The executable: the reference app's kinds served on stdio.
        .executableTarget(
            name: "vmhost",
            dependencies: ["VMHost", "AppComposition"],
            path: "Sources/ReferenceApp/vmhost",
            swiftSettings: settings
        ),
        // The executable: the reference app's kinds served to browsers over WebSocket, and the web demo.
        .executableTarget(
            name: "vmhost-web",
            dependencies: [
                "VMHost", "VMHostWebSocket", "AppComposition",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/ReferenceApp/vmhost-web",
            swiftSettings: settings
        ),
        // Test support of the reference app: a loopback HTTP server and API stubs.
        .target(
            name: "BackendTesting", dependencies: ["VMHostWire", "VMHostEventLoop", "VMHostRuntime", "VMHostTesting", "Backend"],
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
        // The wire: the frame reader and the JSON-RPC engine (corpus Tests/Hardening/corpus).
        .executableTarget(
            name: "vmhost-fuzz", dependencies: ["VMHostWire", "VMHostEventLoop", "VMHostJSONRPC", "FuzzSupport"],
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
        .testTarget(name: "BackendTests", dependencies: ["Backend", "HTTPBackend", "BackendTesting"], swiftSettings: settings),
        // The store, and what the reference app keeps in it (through the composition and a loopback server).
        .testTarget(
            name: "StateStoreTests",
            dependencies: [
                "StateStore", "AppComposition", "Backend", "HTTPBackend", "BackendTesting",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: settings),
    ]
)
