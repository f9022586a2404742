# Waiting for the dpkg/apt lock, sourced by setup.sh (and by its test, Tests/EndToEnd/test_setup_script.py).
#
# On a fresh VM, unattended-upgrades (or another apt) often holds the lock for minutes; apt-get
# then fails at once. setup.sh calls wait_for_apt_lock before each apt-get: while a lock file is
# held it says which one and by what, checks again every APT_LOCK_POLL seconds, and gives up after
# APT_LOCK_DEADLINE seconds with a message that says what to do.
#
# Settings (environment), each with a default:
#   APT_LOCK_DEADLINE  seconds to wait in all (600)
#   APT_LOCK_POLL      seconds between checks (5)
#   APT_LOCK_FILES     the lock files, space-separated (dpkg's and apt's)
#   APT_LOCK_CHECK     a command given a lock file, printing what holds it (process ids and names)
#                      and succeeding when it is held (apt_lock_holder, from /proc/locks)
#   APT_LOCK_SLEEP     the command that waits APT_LOCK_POLL seconds (sleep)
# The time waited is the sum of the polls, not read from a clock, so a test with a fake check and
# a fake sleep runs in no time and always the same way.

apt_lock_files_default="/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock"

# What holds the lock file $1 (process ids and names), printed; fails when nothing does.
# dpkg and apt lock with fcntl (POSIX) locks, which /proc/locks lists by inode for every process,
# so no root, fuser or lslocks is needed (flock(1) would not see them: another kind of lock).
apt_lock_holder() {
    local file=$1 inode pids pid
    inode=$(stat -L -c %i "$file" 2>/dev/null) || return 1
    pids=$(awk -v inode="$inode" '$2 != "->" && split($6, id, ":") == 3 && id[3] == inode { print $5 }' \
        /proc/locks 2>/dev/null | sort -u)
    [ -n "$pids" ] || return 1
    for pid in $pids; do
        printf '%s (%s) ' "$pid" "$(cat "/proc/$pid/comm" 2>/dev/null || echo '?')"
    done
    echo
}

# Returns once no lock file is held; fails with a message after APT_LOCK_DEADLINE seconds.
wait_for_apt_lock() {
    local deadline=${APT_LOCK_DEADLINE:-600} poll=${APT_LOCK_POLL:-5}
    local check=${APT_LOCK_CHECK:-apt_lock_holder} pause=${APT_LOCK_SLEEP:-sleep}
    local files=${APT_LOCK_FILES:-$apt_lock_files_default}
    local waited=0 file holder said=
    while :; do
        holder=
        for file in $files; do
            if holder=$($check "$file"); then break; fi
            holder=
        done
        if [ -z "$holder" ]; then
            [ -z "$said" ] || echo "setup: the apt lock is free after ${waited}s; going on" >&2
            return 0
        fi
        if [ "$waited" -ge "$deadline" ]; then
            echo "setup: gave up after ${waited}s waiting for the apt lock $file, held by ${holder% }" >&2
            echo "setup: another apt or dpkg (often unattended-upgrades on a fresh machine) is still running;" \
                "run scripts/setup.sh again when it has finished, or wait longer with APT_LOCK_DEADLINE=SECONDS" >&2
            return 1
        fi
        if [ -z "$said" ]; then
            echo "setup: waiting for the apt lock $file, held by ${holder% }" \
                "(another apt or dpkg, e.g. unattended-upgrades); checking every ${poll}s for up to ${deadline}s" >&2
            said=1
        fi
        # The last pause ends at the deadline.
        local step=$((deadline - waited < poll ? deadline - waited : poll))
        $pause "$step"
        waited=$((waited + step))
    done
}
