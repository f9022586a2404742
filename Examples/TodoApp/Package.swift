// swift-tools-version: 6.1
// A todo list served by vmhost: an app built on the framework's public products only, depending on
// a version of vmhost (the one in vmhost's VERSION) as any app outside this repository does.
import PackageDescription

let package = Package(
    name: "TodoApp",
    platforms: [.macOS(.v15)],
    products: [
        // The app's kinds, for another `main` of the app (Examples/TodoWeb serves them to browsers).
        .library(name: "TodoKinds", targets: ["TodoKinds"]),
        // The app in a shell's own process (an iOS app, a desktop shell, Python through ctypes):
        // libtodo-embedded, through vmhost's C ABI (include/vmhost.h).
        .library(name: "todo-embedded", type: .dynamic, targets: ["todo-embedded"]),
    ],
    // Off by default: this package itself serves stdio and resolves swift-log alone. An app that
    // serves these kinds to browsers (Examples/TodoWeb) enables it, and it enables vmhost's trait of
    // the same name. Passed on because SwiftPM (6.3) fails to resolve a package at a version that
    // one dependent asks for with a trait and another without ("exhausted attempts to resolve the
    // dependencies graph": swiftlang/swift#90253, swift-package-manager#10485).
    traits: [.trait(name: "WebSocket", description: "vmhost's WebSocket transport, for an app serving these kinds to browsers.")],
    dependencies: [
        // vmhost by version, as any app outside this repository depends on it: the address stands for
        // wherever your team keeps vmhost. In this checkout scripts/use-tagged-vmhost.sh (run by
        // scripts/test.sh) mirrors it to a clone of HEAD tagged with VERSION.
        .package(
            url: "https://git.example.com/you/vmhost.git", from: "0.3.0",
            traits: [.trait(name: "WebSocket", condition: .when(traits: ["WebSocket"]))]),
    ],
    targets: [
        // The app's kinds, its API protocol and its in-memory backend.
        .target(name: "TodoKinds", dependencies: [.product(name: "VMHost", package: "vmhost")]),
        // The app's `main`: its kinds served on stdio.
        .executableTarget(
            name: "todo-host", dependencies: ["TodoKinds", .product(name: "VMHost", package: "vmhost")]),
        // The app's library: `vmhost_open` naming its server; the framework defines the rest of the ABI.
        .target(
            name: "todo-embedded",
            dependencies: ["TodoKinds", .product(name: "VMHostEmbedding", package: "vmhost")]),
        .testTarget(
            name: "TodoKindsTests", dependencies: ["TodoKinds", .product(name: "VMHostTesting", package: "vmhost")]),
    ]
)
