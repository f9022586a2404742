// swift-tools-version: 6.0
// vmhost: every view-model of an app in one Swift process, served over JSON-RPC 2.0 on stdio.
//
// One dependency, kept small and pure Swift: swift-log (logging to stderr). The command line is
// parsed by the executable itself (Sources/vmhost/CommandLineOptions.swift).
import PackageDescription

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // Release builds link the Swift runtime and Foundation statically (see the vmhost target);
    // modules must then be compiled against the static runtime's module files.
    .unsafeFlags(["-static-stdlib", "-cross-module-optimization"], .when(configuration: .release)),
]

/// Release executables link the Swift runtime and Foundation in and are not position-independent:
/// start-up then binds no symbols of theirs and relocates none of their metadata, which took a
/// third of vmhost's time to its first reply and 8 MiB of its RSS (bench/RESULTS.md). lld, from
/// the toolchain, links them. FoundationNetworking needs libcurl's development files (scripts/setup.sh).
let releaseLinking: [LinkerSetting] = [
    .unsafeFlags(["-static-stdlib", "-use-ld=lld", "-Xclang-linker", "-no-pie"], .when(configuration: .release)),
]

let package = Package(
    name: "vmhost",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "vmhost", targets: ["vmhost"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // Layer 0: the C JSON library (Debian: libjansson-dev).
        .systemLibrary(
            name: "CJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"]), .brew(["jansson"])]
        ),
        // Layer 1: the single host thread and its global actor.
        .target(name: "EventLoop", swiftSettings: settings),
        // Layer 2: JSON values (parsed and written by jansson), framing, the output queue and writer.
        .target(name: "Wire", dependencies: ["CJansson", "EventLoop"], swiftSettings: settings),
        // Layer 3: the JSON-RPC 2.0 engine.
        .target(name: "JSONRPC", dependencies: ["Wire", "EventLoop"], swiftSettings: settings),
        // Layer 4: properties, events, inputs, commands, activity, clocks, domain errors, view-model declarations.
        .target(name: "Runtime", dependencies: ["Wire", "EventLoop"], swiftSettings: settings),
        // Layer 5: the backend: the API contract, the HTTP client and the embedded demo backend.
        .target(name: "Backend", dependencies: ["Wire", "EventLoop", "Runtime"], swiftSettings: settings),
        // Layer 6: the view-models, one module per screen; pure logic over the backend's API.
        .target(name: "ProductList", dependencies: ["Wire", "EventLoop", "Runtime", "Backend"], swiftSettings: settings),
        .target(name: "Login", dependencies: ["Wire", "EventLoop", "Runtime", "Backend"], swiftSettings: settings),
        .target(name: "MenuGroups", dependencies: ["Wire", "EventLoop", "Runtime", "Backend"], swiftSettings: settings),
        // Layer 7: the host: registry, subscriptions, delivery, method table.
        .target(name: "ViewModelHost", dependencies: ["Wire", "EventLoop", "JSONRPC", "Runtime"], swiftSettings: settings),
        // Layer 8: the thin executable.
        .executableTarget(
            name: "vmhost",
            dependencies: [
                "Wire", "EventLoop", "JSONRPC", "Runtime", "Backend", "ViewModelHost",
                "ProductList", "Login", "MenuGroups",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: settings,
            linkerSettings: releaseLinking
        ),
        // In-process micro-benchmarks of the JSON layer and of dispatch (bench/run.py, scenario g).
        .executableTarget(
            name: "vmhost-bench", dependencies: ["Wire", "EventLoop", "JSONRPC"], swiftSettings: settings,
            linkerSettings: releaseLinking),

        // A libFuzzer target over the frame reader and the JSON-RPC engine (scripts/test.sh, suite
        // libfuzzer); without -DFUZZING it builds as a replayer of its corpus (Tests/Hardening/corpus).
        .systemLibrary(name: "CLibFuzzer", path: "Sources/CLibFuzzer"),
        .executableTarget(
            name: "vmhost-fuzz", dependencies: ["Wire", "EventLoop", "JSONRPC", "CLibFuzzer"], swiftSettings: settings,
            linkerSettings: releaseLinking),

        // Test support: a loopback HTTP server and API stubs; an in-process connection, test kinds.
        .target(name: "BackendTesting", dependencies: ["Wire", "EventLoop", "Runtime", "Backend"], swiftSettings: settings),
        .target(
            name: "TestSupport",
            dependencies: ["Wire", "EventLoop", "JSONRPC", "Runtime", "ViewModelHost"],
            swiftSettings: settings
        ),
        .testTarget(name: "WireTests", dependencies: ["Wire"], swiftSettings: settings),
        .testTarget(name: "JSONRPCTests", dependencies: ["JSONRPC", "TestSupport"], swiftSettings: settings),
        .testTarget(name: "RuntimeTests", dependencies: ["Runtime", "TestSupport"], swiftSettings: settings),
        .testTarget(name: "ViewModelHostTests", dependencies: ["ViewModelHost", "TestSupport"], swiftSettings: settings),
        .testTarget(name: "ProductListTests", dependencies: ["ProductList", "TestSupport", "BackendTesting"], swiftSettings: settings),
        .testTarget(name: "LoginTests", dependencies: ["Login", "TestSupport", "BackendTesting"], swiftSettings: settings),
        .testTarget(name: "MenuGroupsTests", dependencies: ["MenuGroups", "TestSupport", "BackendTesting"], swiftSettings: settings),
        .testTarget(name: "BackendTests", dependencies: ["Backend", "BackendTesting"], swiftSettings: settings),
    ]
)
