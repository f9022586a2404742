"""scripts/demo.sh as a first-time user meets it: its usage, a bad option, a repeat start."""
import subprocess

from harness import ROOT

DEMO = ROOT / "scripts" / "demo.sh"


def demo(*args: str) -> "subprocess.CompletedProcess[str]":
    """demo.sh without a terminal (stdin and stdout are not one): it runs the tour there. The
    limit is a guard against a hang; a start whose sources changed builds vmhost first."""
    return subprocess.run([str(DEMO), *args], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=900)


def test_help_prints_the_demos_own_usage_and_builds_nothing():
    done = demo("--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: scripts/demo.sh [--locale zh-Hans|en] [vmhost options…]")
    for option in ("--locale", "--backend", "--state-dir", "--timeout-ms", "vmhost --help"):
        assert option in done.stdout
    assert "o logs out" in done.stdout and "F2" in done.stdout
    assert "python3 -m vmhost.demo" not in done.stdout
    assert done.stderr == ""  # no set-up, no build


def test_an_unknown_option_is_a_usage_error_without_a_terminal():
    done = demo("--bogus")
    assert done.returncode == 64, done.stdout
    assert "Unknown option '--bogus'" in done.stderr
    assert "scripts/demo.sh --help" in done.stderr
    assert "→" not in done.stdout  # the tour did not run


def test_a_bad_locale_is_a_usage_error_before_anything_runs():
    for args, message in [(("--locale",), "--locale needs a value"),
                          (("--locale", "fr"), "expected zh-Hans or en, got 'fr'")]:
        done = demo(*args)
        assert done.returncode == 64
        assert message in done.stderr and "scripts/demo.sh --help" in done.stderr
        assert done.stdout == ""


def test_a_repeat_start_neither_sets_up_nor_builds_again_and_prints_no_warning():
    first = demo()
    assert first.returncode == 0, first.stderr
    assert "warning" not in first.stderr
    second = demo()
    assert second.returncode == 0, second.stderr
    assert "vmhost exited with status 0" in second.stdout  # the tour ran
    assert second.stderr == "", second.stderr  # no "setup: …", no build, no warning


def test_options_without_a_terminal_are_checked_then_said_to_be_unused():
    done = demo("--locale", "en", "--backend", "embedded")
    assert done.returncode == 0, done.stderr
    assert "not used: --locale en --backend embedded" in done.stderr


def build_reason(root, *sources: str) -> str:
    """scripts/build-stamp.sh's answer for a binary `bin`, stamp `stamp` and `Package.resolved` under `root`."""
    script = f'. {ROOT / "scripts" / "build-stamp.sh"}\ncd "$1"\nbuild_reason bin stamp Package.resolved {" ".join(sources)}'
    done = subprocess.run(["bash", "-c", script, "reason", str(root)], capture_output=True, text=True,
                          timeout=30, check=True)
    return done.stdout.strip()


def test_the_demo_scripts_say_why_they_build_and_never_that_sources_changed_when_none_did(tmp_path):
    """demo.sh and web-demo.sh build when build_reason says why: "sources changed" names a file
    newer than their last build, and a binary built by another command (scripts/test.sh) is only
    checked, not said to have changed sources."""
    import os

    (tmp_path / "Sources").mkdir()
    source = tmp_path / "Sources" / "main.swift"
    source.write_text("")
    assert build_reason(tmp_path, "Sources") == "first build"
    binary = tmp_path / "bin"
    binary.write_text("")
    binary.chmod(0o755)
    assert build_reason(tmp_path, "Sources") == "not resolved"
    resolved = tmp_path / "Package.resolved"
    resolved.write_text("{}")
    assert build_reason(tmp_path, "Sources") == "not built by this script before"
    stamp = tmp_path / "stamp"
    stamp.write_text("")
    # Times set by hand, never waited for: everything older than the stamp, then one file newer.
    for path in (source, resolved, binary, tmp_path / "Sources"):
        os.utime(path, (1_000_000, 1_000_000))
    os.utime(stamp, (2_000_000, 2_000_000))
    assert build_reason(tmp_path, "Sources") == ""
    os.utime(source, (3_000_000, 3_000_000))
    assert build_reason(tmp_path, "Sources") == "sources changed: Sources/main.swift"
    os.utime(source, (1_000_000, 1_000_000))
    os.utime(resolved, (3_000_000, 3_000_000))
    assert build_reason(tmp_path, "Sources") == "sources changed: Package.resolved"
