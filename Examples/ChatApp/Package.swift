// swift-tools-version: 6.0
// A chat thread served by vmhost whose messages come from a real HTTP server: the framework's
// HTTP client (`VMHostHTTP`) for its calls, the app's own errors for its failures, and a long-poll
// of new messages bound to the thread's view-model (`Listening`), on public products only.
import PackageDescription

let package = Package(
    name: "ChatApp",
    platforms: [.macOS(.v15)],
    dependencies: [
        // vmhost by version, as any app outside this repository depends on it: the address stands for
        // wherever your team keeps vmhost. In this checkout scripts/use-tagged-vmhost.sh (run by
        // scripts/test.sh) mirrors it to a clone of HEAD tagged with VERSION.
        .package(url: "https://git.example.com/you/vmhost.git", from: "0.3.0"),
    ],
    targets: [
        // The app's kinds and its server API.
        .target(
            name: "ChatKinds",
            dependencies: [.product(name: "VMHost", package: "vmhost"), .product(name: "VMHostHTTP", package: "vmhost")]),
        // The app's `main`: its kinds served on stdio, calling the server `--server-url` names.
        .executableTarget(name: "chat-host", dependencies: ["ChatKinds", .product(name: "VMHost", package: "vmhost")]),
    ]
)
