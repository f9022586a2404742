"""A package that depends on vmhost by version resolves and builds, tests its kind with the kit,
and serves through the server entry. The repository's committed HEAD is cloned into a temporary
directory and tagged 1.0.0 there; a tiny consumer package depends on it `from: "1.0.0"` (the
`VMHost` and `VMHostTesting` products), declares one kind and a `main` of three lines, runs one test
of the kind, is built, and answers `initialize`, `ping` and `host.describe` through a pipe. Its
Package.resolved pins vmhost and swift-log and nothing else: the WebSocket transport's
dependencies (hummingbird, SwiftNIO, …) are guarded by the package trait `WebSocket`, which it does
not enable. Only the framework and swift-log are built: the reference app's modules are not part of
those products.

A package that enables the trait, resolves the transport's dependencies from a tag and serves its
kinds to browsers through `WebSocketServer` is Examples/TodoWeb (suite `examples`: every example
depends on a tag of HEAD, scripts/use-tagged-vmhost.sh), so that the test command builds SwiftNIO
from a tag once.
"""
from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD_LIMIT = 1500  # seconds: a deadline for a cold build on a loaded machine, not a measure

CONSUMER_MANIFEST = """\
// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "consumer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "{url}", from: "1.0.0"),
    ],
    targets: [
        .target(name: "EchoKind", dependencies: [.product(name: "VMHost", package: "vmhost")]),
        .executableTarget(name: "consumer", dependencies: ["EchoKind", .product(name: "VMHost", package: "vmhost")]),
        .testTarget(name: "EchoKindTests", dependencies: ["EchoKind", .product(name: "VMHostTesting", package: "vmhost")]),
    ]
)
"""

CONSUMER_KIND = """\
import VMHost

/// One kind: a text input echoed in a property.
@HostActor
public final class EchoViewModel: ViewModel {
    public static let kind = "Echo"
    @Field public var text = ""
    @Input(secret: true) var secret = ""
    public init() {}
}
"""

CONSUMER_MAIN = """\
import EchoKind
import VMHost

Server(name: "consumer", version: "2.3.4") { _ in ServedApp(kinds: [ViewModelFactory { _ in EchoViewModel() }]) }.run()
"""

CONSUMER_TEST = """\
import EchoKind
import Testing
import VMHostTesting

@Test @HostActor func theTextIsEchoed() async {
    let test = ViewModelTest { EchoViewModel() }
    test.set(\\.$text, "hello")
    test.expect([.changed(\\.$text, "hello")])
    await test.finish()
}
"""


@pytest.fixture(scope="module")
def tagged(tmp_path_factory) -> Path:
    """A clone of the committed HEAD tagged 1.0.0."""
    clone = tmp_path_factory.mktemp("tagged") / "vmhost"
    git("clone", "--quiet", str(ROOT), str(clone), cwd=clone.parent)
    git("-c", "user.name=test", "-c", "user.email=test@example.invalid", "tag", "1.0.0", cwd=clone)
    return clone


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_a_package_depending_on_a_version_tag_builds_and_serves(tmp_path, tagged):
    clone = tagged

    consumer = tmp_path / "consumer"
    for folder in ["Sources/consumer", "Sources/EchoKind", "Tests/EchoKindTests"]:
        (consumer / folder).mkdir(parents=True)
    (consumer / "Package.swift").write_text(CONSUMER_MANIFEST.format(url=clone.as_uri()))
    (consumer / "Sources" / "EchoKind" / "EchoViewModel.swift").write_text(CONSUMER_KIND)
    (consumer / "Sources" / "consumer" / "main.swift").write_text(CONSUMER_MAIN)
    (consumer / "Tests" / "EchoKindTests" / "EchoKindTests.swift").write_text(CONSUMER_TEST)

    tested = subprocess.run(["swift", "test"], cwd=consumer, capture_output=True, text=True, timeout=BUILD_LIMIT)
    assert tested.returncode == 0, tested.stdout[-4000:] + tested.stderr[-4000:]
    assert "theTextIsEchoed" in tested.stdout + tested.stderr
    resolved = json.loads((consumer / "Package.resolved").read_text())
    pins = {pin["identity"]: pin["state"] for pin in resolved["pins"]}
    assert pins["vmhost"].get("version") == "1.0.0", pins
    # vmhost and swift-log, nothing else: no web server comes with the framework.
    assert set(pins) == {"vmhost", "swift-log"}, sorted(pins)
    built = subprocess.run(["swift", "build", "--product", "consumer"], cwd=consumer, capture_output=True,
                           text=True, timeout=BUILD_LIMIT)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    # Nothing of the reference app was compiled for the consumer.
    objects = {path.parent.name for path in (consumer / ".build").rglob("*.o")}
    assert not any(name.startswith(("Backend", "ProductList", "Login", "MenuGroups")) for name in objects), objects

    binary = next(path for path in (consumer / ".build").glob("*/debug/consumer") if path.is_file())
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 3, "method": "host.describe"},
    ]
    done = subprocess.run([str(binary)], input="".join(json.dumps(m) + "\n" for m in messages).encode(),
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    replies = {reply["id"]: reply for reply in map(json.loads, done.stdout.decode().splitlines())}
    assert replies[1]["result"]["serverInfo"] == {"name": "consumer", "version": "2.3.4"}
    assert replies[2]["result"] == {}
    (kind,) = replies[3]["result"]["kinds"]
    assert kind["kind"] == "Echo"
    assert [(i["name"], i.get("secret", False)) for i in kind["inputs"]] == [("text", False), ("secret", True)]

    usage = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 0 and "--trace" in usage.stdout and "consumer" in usage.stdout
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout.strip() == "consumer 2.3.4"

