import Testing
@testable import VMHostTesting

/// The kit against a host that misbehaves: a process that exits, closes its output or hangs
/// (`/bin/sh` standing in for a broken binary), and a kind that outlives `vm.dispose` in process.
@Suite("Host connections", .capturingKitIssues)
@HostActor
struct HostConnectionTests {
    /// Runs `script` in `sh` as the host, with a short timeout.
    private func host(_ script: String) throws -> SpawnedConnection {
        try SpawnedConnection(binary: "/bin/sh", arguments: ["-c", script], timeout: .milliseconds(500))
    }

    @Test func aHostThatExitsIsReportedAtOnceWithItsStatusAtTheTestsLine() async throws {
        let client = try host("read line; exit 3")
        let line = #line + 2
        let issues1 = await KitIssues.capture {
            await client.request("ping")
        }
        #expect(issues1.count == 1)
        #expect(issues1.contains { issue in
            issue.sourceLocation?.line == line && issue.comments.contains { $0.rawValue == "no answer to ping: the host exited with status 3" }
        })
        // No second wait: the next request fails at once, naming why.
        let issues2 = await KitIssues.capture {
            await client.request("vm.list")
        }
        #expect(issues2.count == 1)
        #expect(issues2.contains { issue in
            issue.comments.contains { $0.rawValue == "no answer to vm.list: the host exited with status 3 (before answering ping)" }
        })
        await client.finish()
    }

    @Test func aHostThatClosesItsOutputIsToldFromOneThatExits() async throws {
        let client = try host("exec 1>&-; read line; read line")
        let issues3 = await KitIssues.capture {
            await client.request("ping")
        }
        #expect(issues3.count == 1)
        #expect(issues3.contains { issue in
            issue.comments.contains { $0.rawValue == "no answer to ping: the host closed its output but is still running" }
        })
        await client.finish()
    }

    @Test func aSilentHostFailsOneWaitNotEvery() async throws {
        let client = try host("while read line; do :; done")
        let issues4 = await KitIssues.capture {
            await client.request("ping")
        }
        #expect(issues4.count == 1)
        #expect(issues4.contains { issue in
            issue.comments.contains { $0.rawValue == "no answer to ping: the host is running but wrote nothing for 0.5 seconds" }
        })
        let issues5 = await KitIssues.capture {
            await client.request("ping")
        }
        #expect(issues5.count == 1)
        #expect(issues5.contains { issue in
            issue.comments.contains { $0.rawValue.hasPrefix("no answer to ping: the host wrote nothing for 0.5 seconds") }
        })
        await client.finish()
    }

    @Test func aKindAliveAfterVmDisposeFailsTheTestInProcess() async {
        let service = ReleaseTests.Service()
        let client = InProcessConnection(kinds: [ViewModelFactory { _ in ReleaseTests.Leaky(service: service) }])
        await client.request("vm.create", ["kind": "Leaky", "id": "l"])
        let line = #line + 2
        let issues6 = await KitIssues.capture {
            await client.request("vm.dispose", ["vm": "l"])
        }
        #expect(issues6.count == 1)
        #expect(issues6.contains { issue in
            issue.sourceLocation?.line == line && issue.comments.contains { $0.rawValue.hasPrefix("Leaky l outlived vm.dispose") }
        })
        await client.finish()
    }

    @Test func aKindReleasedByVmDisposePasses() async {
        let client = InProcessConnection(kinds: [ProbeViewModel.factory()])
        await client.request("vm.create", ["kind": "Probe", "id": "p"])
        _ = await client.start("vm.send", ["vm": "p", "input": "once"], id: 1)
        // Disposed while its command runs: the check waits for the cancelled work to unwind.
        let exchange = await client.request("vm.dispose", ["vm": "p"])
        #expect(exchange.result == [:])
        await client.finish()
    }
}
