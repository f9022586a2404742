"""scripts/setup.sh's wait for the dpkg/apt lock (scripts/apt-lock.sh), with no apt and no real waits.

The waiting function takes its check and its pause as commands: a fake check says the lock is held
for a number of polls and a fake pause records what it was asked to wait, so a test runs in no time
and always the same way. The real check is run against a lock this test holds, as dpkg holds its own.
"""
import fcntl
import os
import subprocess
from pathlib import Path

from harness import ROOT

LIBRARY = ROOT / "scripts" / "apt-lock.sh"

# A fake check: held by "4242 (unattended-upgr)" until the fake pause has run $HELD_POLLS times.
FAKES = """
fake_sleep() { echo "$1" >> "$PAUSES"; }
fake_check() {
    local polls=0
    [ ! -e "$PAUSES" ] || polls=$(wc -l < "$PAUSES")
    [ "$polls" -lt "$HELD_POLLS" ] && echo "4242 (unattended-upgr) "
}
"""


def wait(tmp_path: Path, held_polls: int, deadline: int, poll: int = 5,
         files: str = "/var/lib/dpkg/lock-frontend") -> "tuple[subprocess.CompletedProcess[str], list[str]]":
    pauses = tmp_path / "pauses"
    env = dict(os.environ, PAUSES=str(pauses), HELD_POLLS=str(held_polls),
               APT_LOCK_DEADLINE=str(deadline), APT_LOCK_POLL=str(poll), APT_LOCK_FILES=files,
               APT_LOCK_CHECK="fake_check", APT_LOCK_SLEEP="fake_sleep")
    done = subprocess.run(["bash", "-c", f". {LIBRARY}\n{FAKES}\nwait_for_apt_lock"], env=env,
                          capture_output=True, text=True, timeout=30)
    return done, pauses.read_text().split() if pauses.exists() else []


def test_a_free_lock_goes_on_at_once_and_says_nothing(tmp_path):
    done, pauses = wait(tmp_path, held_polls=0, deadline=600)
    assert done.returncode == 0
    assert pauses == []
    assert done.stderr == ""


def test_a_held_lock_is_waited_for_saying_what_and_by_whom_once(tmp_path):
    done, pauses = wait(tmp_path, held_polls=3, deadline=600)
    assert done.returncode == 0, done.stderr
    assert pauses == ["5", "5", "5"]
    lines = done.stderr.splitlines()
    assert lines == [
        "setup: waiting for the apt lock /var/lib/dpkg/lock-frontend, held by 4242 (unattended-upgr)"
        " (another apt or dpkg, e.g. unattended-upgrades); checking every 5s for up to 600s",
        "setup: the apt lock is free after 15s; going on",
    ]


def test_a_lock_held_past_the_deadline_gives_up_with_what_to_do(tmp_path):
    done, pauses = wait(tmp_path, held_polls=1000, deadline=12)
    assert done.returncode == 1
    assert pauses == ["5", "5", "2"]  # the last pause ends at the deadline
    assert "gave up after 12s waiting for the apt lock /var/lib/dpkg/lock-frontend, held by 4242 (unattended-upgr)" \
        in done.stderr
    assert "run scripts/setup.sh again" in done.stderr and "APT_LOCK_DEADLINE=SECONDS" in done.stderr


def test_every_lock_file_is_checked(tmp_path):
    """The fake check holds only the second file: the wait names it."""
    pauses = tmp_path / "pauses"
    env = dict(os.environ, PAUSES=str(pauses), APT_LOCK_DEADLINE="5", APT_LOCK_POLL="5",
               APT_LOCK_FILES="/a/lock /b/lock", APT_LOCK_CHECK="only_b", APT_LOCK_SLEEP="fake_sleep")
    script = f'. {LIBRARY}\n{FAKES}\nonly_b() {{ [ "$1" = /b/lock ] && echo "7 (apt-get)"; }}\nwait_for_apt_lock'
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert "waiting for the apt lock /b/lock, held by 7 (apt-get)" in done.stderr


def holder(path: Path) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(["bash", "-c", f'. {LIBRARY}\napt_lock_holder "$1"', "check", str(path)],
                          capture_output=True, text=True, timeout=30)


def test_the_real_check_sees_a_posix_lock_as_dpkg_takes_it(tmp_path):
    lock = tmp_path / "lock-frontend"
    lock.write_text("")
    assert holder(lock).returncode == 1  # nobody holds it
    with open(lock, "w") as handle:
        fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # dpkg's kind of lock (fcntl)
        done = holder(lock)
        assert done.returncode == 0, done.stderr
        comm = Path(f"/proc/{os.getpid()}/comm").read_text().strip()
        assert done.stdout.strip() == f"{os.getpid()} ({comm})"
    assert holder(lock).returncode == 1  # released
    assert holder(tmp_path / "missing").returncode == 1


def test_a_venv_made_from_another_python3_is_kept_with_its_packages(tmp_path):
    """A shell whose python3 differs (a pyenv shim, an activated venv) must not silently make .venv
    again, which would drop the test packages: the one that runs is kept, and setup says so."""
    import shutil
    import sys

    (tmp_path / "scripts").mkdir()
    (tmp_path / "Tests").mkdir()
    for name in ("scripts/setup.sh", "scripts/apt-lock.sh", "Tests/requirements.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    venv = tmp_path / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    (venv / ".base").write_text("/opt/another/bin/python3\n")  # made from another python3
    (venv / "kept").write_text("the packages it holds")
    done = subprocess.run([str(tmp_path / "scripts" / "setup.sh")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert (venv / "kept").exists()  # not made again
    assert "setup: keeping .venv, made with /opt/another/bin/python3; the python3 on PATH is" in done.stderr
    assert "remove .venv to make it again" in done.stderr
    assert "making .venv" not in done.stderr
    # The stamp is written: a second run returns at once, saying nothing.
    again = subprocess.run([str(tmp_path / "scripts" / "setup.sh")], capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0 and again.stderr == "", again.stderr
