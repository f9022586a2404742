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
