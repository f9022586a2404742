// swift-tools-version: 6.0
// An article search served by vmhost: a search screen (debounced, latest query only, paging,
// retry) and an article screen (loaded on open, a favourite toggled optimistically), built on the
// framework's public products only, as any app outside this repository would be.
import PackageDescription

let package = Package(
    name: "SearchApp",
    platforms: [.macOS(.v15)],
    dependencies: [
        // vmhost by version, as any app outside this repository depends on it: the address stands for
        // wherever your team keeps vmhost. In this checkout scripts/use-tagged-vmhost.sh (run by
        // scripts/test.sh) mirrors it to a clone of HEAD tagged with VERSION.
        .package(url: "https://git.example.com/you/vmhost.git", from: "0.3.0"),
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
