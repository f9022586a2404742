// swift-tools-version: 6.0
// vmhost over WebSocket: the transport (`VMHostWebSocket`, one host per connection, on the host
// thread) and the reference app served to browsers with the web demo (`vmhost-web`).
//
// A package of its own, beside the framework's (`..`): the transport builds on hummingbird,
// hummingbird-websocket and SwiftNIO, which an app that serves stdio only (or embeds the host)
// never resolves. An app that serves its kinds to browsers depends on this package's
// `VMHostWebSocket` as it depends on `VMHost`.
import PackageDescription

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
]

let package = Package(
    name: "vmhost-web",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "VMHostWebSocket", targets: ["VMHostWebSocket"]),
        .executable(name: "vmhost-web", targets: ["vmhost-web"]),
    ],
    dependencies: [
        .package(name: "vmhost", path: ".."),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // The transport: one Host per connection, on the host thread (a library, so that an app can
        // serve its kinds to browsers too).
        .target(
            name: "VMHostWebSocket",
            dependencies: [
                .product(name: "VMHost", package: "vmhost"),
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
        // The reference app's kinds served to browsers over WebSocket, and the web demo.
        .executableTarget(
            name: "vmhost-web",
            dependencies: [
                "VMHostWebSocket",
                .product(name: "VMHost", package: "vmhost"),
                .product(name: "ReferenceApp", package: "vmhost"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: settings),
        // The transport's pure parts, fed bytes one at a time and at every limit: the handshake
        // gate, the frame scanner, message assembly, static file guarding, the fair inbox.
        .testTarget(
            name: "VMHostWebSocketTests",
            dependencies: [
                "VMHostWebSocket",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: settings),
    ]
)
