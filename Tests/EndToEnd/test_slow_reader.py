"""A client that stops reading: property changes merge (latest wins) while stdout is full, memory
stays bounded, and once the client reads again its mirror ends at the right values."""
from harness import HostProcess, rss_kib


def test_changes_merge_while_the_reader_is_stalled_and_the_final_state_is_right():
    with HostProcess() as host:
        host.request("vm.create", {"kind": "Login", "id": "l"})
        host.request("vm.subscribe", {"vm": "l", "outputs": ["usernameValid"]})
        before = rss_kib(host.process.pid)
        inputs = 20_000
        chunk = []
        for i in range(inputs):
            value = "13800138000" if i % 2 == 0 else "1"
            chunk.append('{"jsonrpc":"2.0","method":"vm.send","params":{"vm":"l","input":"username","value":"%s"}}\n' % value)
            if len(chunk) == 1000:
                host.write_raw("".join(chunk).encode())
                chunk = []
        # Nothing was read while 20,000 changes were made: stdout filled up long ago.
        during = rss_kib(host.process.pid)
        exchange = host.request("ping")
        changes = exchange.changes
        assert exchange.result == {}
        assert 0 < len(changes) < inputs / 2, len(changes)
        assert changes[-1]["values"] == {"usernameValid": False}  # the last input was "1"
        assert during - before < 16 * 1024, (before, during)
        assert host.request("vm.get", {"vm": "l", "outputs": ["usernameValid"]}).result == {"values": {"usernameValid": False}}
