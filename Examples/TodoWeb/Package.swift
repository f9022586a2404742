// swift-tools-version: 6.1
// The todo app's kinds (Examples/TodoApp) served to browsers over WebSocket: an app built on the
// framework's public products only, `VMHost` and the WebSocket transport's `VMHostWebSocket`, as any
// app outside this repository would be.
import PackageDescription

let package = Package(
    name: "TodoWeb",
    platforms: [.macOS(.v15)],
    dependencies: [
        // vmhost by version, with the trait that brings the WebSocket transport (hummingbird,
        // SwiftNIO), which an app that serves stdio only never resolves. The address stands for
        // wherever your team keeps vmhost; in this checkout scripts/use-tagged-vmhost.sh (run by
        // scripts/test.sh) mirrors it to a clone of HEAD tagged with VERSION.
        .package(url: "https://git.example.com/you/vmhost.git", from: "0.3.0", traits: ["WebSocket"]),
        // The app's kinds, shared with its stdio executable; with the trait that TodoApp passes on to
        // vmhost, so that both ask for vmhost with the same traits.
        .package(path: "../TodoApp", traits: ["WebSocket"]),
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
