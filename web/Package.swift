// swift-tools-version: 6.1
// vmhost over WebSocket: the reference app served to browsers with the web demo (`vmhost-web`), and
// the tests of the transport. The transport itself, `VMHostWebSocket`, is a product of the framework's
// package (`..`), whose sources are in Sources/VMHostWebSocket here, guarded by the trait
// `WebSocket` that this package enables (see ../Package.swift).
import PackageDescription

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
]

let package = Package(
    name: "vmhost-web",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "vmhost-web", targets: ["vmhost-web"]),
        // The floor vmhost-web's cost per message is measured against (bench/web_cost.mjs).
        .executable(name: "web-echo-floor", targets: ["web-echo-floor"]),
    ],
    dependencies: [
        .package(name: "vmhost", path: "..", traits: ["WebSocket"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // The versions the framework's package resolves (one graph): the echo floor is built on them.
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
    ],
    targets: [
        // The reference app's kinds served to browsers over WebSocket, and the web demo.
        .executableTarget(
            name: "vmhost-web",
            dependencies: [
                .product(name: "VMHostWebSocket", package: "vmhost"),
                .product(name: "VMHost", package: "vmhost"),
                .product(name: "ReferenceApp", package: "vmhost"),
            ],
            swiftSettings: settings),
        // A bare hummingbird-websocket echo of text frames, on the versions and release flags of
        // vmhost-web: the floor of bench/web_cost.mjs (one small file; not a dependency of the tests).
        .executableTarget(
            name: "web-echo-floor",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: settings),
        // The transport's pure parts, fed bytes one at a time and at every limit: the handshake
        // gate, the frame scanner, message assembly, static file guarding, the fair inbox, who writes
        // a session's output (an embedded channel).
        .testTarget(
            name: "VMHostWebSocketTests",
            dependencies: [
                .product(name: "VMHostWebSocket", package: "vmhost"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: settings),
    ]
)
