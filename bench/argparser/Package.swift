// swift-tools-version: 6.0
import PackageDescription
// Measures swift-argument-parser against a hand-written loop on a lean binary (no Foundation of its
// own, static stdlib): bench/RESULTS.md, "The command-line parser on a lean binary".
let package = Package(
    name: "apbench",
    dependencies: [.package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")],
    targets: [
        .executableTarget(name: "withAP", dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .executableTarget(name: "withoutAP"),
    ]
)
