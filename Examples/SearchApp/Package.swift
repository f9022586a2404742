// swift-tools-version: 6.0
// An article search served by vmhost: a search screen (debounced, latest query only, paging,
// retry) and an article screen (loaded on open, a favourite toggled optimistically), built on the
// framework's public products only, as any app outside this repository would be.
import PackageDescription

let package = Package(
    name: "SearchApp",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "vmhost", path: "../.."),
    ],
    targets: [
        // The app's kinds, its API and its in-memory backend.
        .target(name: "SearchKinds", dependencies: [.product(name: "VMHost", package: "vmhost")]),
        // The app's `main`: its kinds served on stdio.
        .executableTarget(name: "search-host", dependencies: ["SearchKinds", .product(name: "VMHost", package: "vmhost")]),
        .testTarget(
            name: "SearchKindsTests", dependencies: ["SearchKinds", .product(name: "VMHostTesting", package: "vmhost")]),
    ]
)
