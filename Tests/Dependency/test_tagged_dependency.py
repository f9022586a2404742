"""A package that depends on vmhost by version resolves swift-log and nothing else, compiles only
the framework and swift-log, tests its kinds with the kit, and serves through the server entry.

The consumer is Examples/SearchApp: it depends on vmhost by URL and version (`from: "0.3.0"`), a URL
mirrored to a clone of the committed HEAD tagged with VERSION (scripts/use-tagged-vmhost.sh), on
the products `VMHost` and `VMHostTesting` only, as an app outside this repository does. The test
command builds it and runs its kit tests in suite `examples`; this suite checks that build (a
repeat `swift build --build-tests` here builds nothing), so that the framework is compiled from a
tag once for both. Run alone, it makes the mirror and builds the example first.

Its Package.resolved pins vmhost at VERSION and swift-log, nothing else: the WebSocket transport's
dependencies (hummingbird, SwiftNIO, …) are guarded by the package trait `WebSocket`, which it does
not enable. Only the framework and swift-log are compiled: the reference app's modules are not part
of those products. A package that enables the trait, resolves the transport's dependencies from a
tag and serves its kinds to browsers through `WebSocketServer` is Examples/TodoWeb (suite
`examples`). That a kind's secret input is described as secret is pinned by the Swift tests
(Tests/ViewModelHostTests/HostConfigurationTests.swift).
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONSUMER = ROOT / "Examples" / "SearchApp"
BUILD_LIMIT = 1500  # seconds: a deadline for a cold build on a loaded machine, not a measure
# The reference app's modules, and the WebSocket transport's dependencies: none is compiled for a
# package that depends on `VMHost` and `VMHostTesting` without the trait.
NOT_COMPILED = ("Backend", "HTTPBackend", "ProductList", "Login", "MenuGroups", "StateStore", "AppComposition",
                "ReferenceApp", "Hummingbird", "NIO")


@pytest.fixture(scope="module")
def consumer() -> Path:
    """Examples/SearchApp, resolved against the tagged clone of HEAD and built with its tests."""
    mirrored = subprocess.run(["scripts/use-tagged-vmhost.sh", str(CONSUMER.relative_to(ROOT))], cwd=ROOT,
                              capture_output=True, text=True, timeout=BUILD_LIMIT)
    assert mirrored.returncode == 0, mirrored.stdout[-4000:] + mirrored.stderr[-4000:]
    built = subprocess.run(["swift", "build", "--build-tests"], cwd=CONSUMER, capture_output=True, text=True,
                           timeout=BUILD_LIMIT)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    return CONSUMER


def test_the_consumer_resolves_vmhost_at_the_tag_and_swift_log_only(consumer):
    resolved = json.loads((consumer / "Package.resolved").read_text())
    pins = {pin["identity"]: pin["state"] for pin in resolved["pins"]}
    version = (ROOT / "VERSION").read_text().strip()
    assert pins["vmhost"].get("version") == version, pins
    # vmhost and swift-log, nothing else: no web server comes with the framework.
    assert set(pins) == {"vmhost", "swift-log"}, sorted(pins)
    # The tag resolved is the committed HEAD's (the mirror's clone is named by its commit).
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert pins["vmhost"]["revision"] == head.stdout.strip(), (pins["vmhost"], head.stdout)


def test_only_the_framework_and_swift_log_are_compiled(consumer):
    modules = {path.parent.name.removesuffix(".build") for path in (consumer / ".build").rglob("*.o")}
    assert "VMHost" in modules and "Logging" in modules, sorted(modules)
    assert not any(name.startswith(NOT_COMPILED) for name in modules), sorted(modules)


def test_the_consumer_answers_through_the_server_entry(consumer):
    binary = next(path for path in (consumer / ".build").glob("*/debug/search-host") if path.is_file())
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 3, "method": "host.describe"},
    ]
    done = subprocess.run([str(binary)], input="".join(json.dumps(m) + "\n" for m in messages).encode(),
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    replies = {reply["id"]: reply for reply in map(json.loads, done.stdout.decode().splitlines())}
    assert replies[1]["result"]["serverInfo"] == {"name": "search-host", "version": "1.0.0"}
    assert replies[2]["result"] == {}
    kinds = {kind["kind"]: kind for kind in replies[3]["result"]["kinds"]}
    assert sorted(kinds) == ["Article", "Search"], sorted(kinds)
    assert "query" in [i["name"] for i in kinds["Search"]["inputs"]], kinds["Search"]

    usage = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 0 and "--trace" in usage.stdout and "search-host" in usage.stdout
    assert "--latency-ms" in usage.stdout, usage.stdout  # the app's own option, beside the framework's
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout.strip() == "search-host 1.0.0"
