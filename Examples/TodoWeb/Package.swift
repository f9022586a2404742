// swift-tools-version: 6.1
// The todo app's kinds (Examples/TodoApp) served to browsers over WebSocket: an app built on the
// framework's public products only, `VMHost` and the WebSocket transport's `VMHostWebSocket`, as any
// app outside this repository would be.
import PackageDescription

let package = Package(
    name: "TodoWeb",
    platforms: [.macOS(.v15)],
    dependencies: [
        // With the trait that brings the WebSocket transport (hummingbird, SwiftNIO), which an app
        // that serves stdio only never resolves. Outside this repository:
        // `.package(url: "https://…/vmhost", from: "0.3.0", traits: ["WebSocket"])`.
        .package(name: "vmhost", path: "../..", traits: ["WebSocket"]),
        // The app's kinds, shared with its stdio executable.
        .package(path: "../TodoApp"),
    ],
    targets: [
        // The app's web `main`: the kinds of TodoServer served over WebSocket, a folder of pages at /.
        .executableTarget(
            name: "todo-web",
            dependencies: [
                .product(name: "TodoKinds", package: "TodoApp"),
                .product(name: "VMHost", package: "vmhost"),
                .product(name: "VMHostWebSocket", package: "vmhost"),
            ]),
    ]
)
