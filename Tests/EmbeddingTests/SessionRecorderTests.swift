#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@_spi(Transport) import VMHost
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWire

/// `--record` (protocol/conformance/README.md, "Recordings"): the recording masks what the trace
/// masks, however malformed the send; its file is the owner's only; it stops at its bound, and at
/// its server's, with a comment saying why.
@Suite struct SessionRecorderTests {
    static let secret = "hunter2-pw"

    /// A recorder writing to a new file of its own, with the trace's rules of the probe app (the
    /// input `username` plain, `password` secret, the member `token` secret).
    func recorder(maxBytes: Int = SessionRecorder.defaultMaxBytes, budget: RecordingBudget = RecordingBudget(limit: 1 << 30))
        throws -> (SessionRecorder, String)
    {
        let path = "/tmp/vmhost-recorder-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).jsonl"
        let fd = try SessionRecorder.create(path: path)
        let recorder = SessionRecorder(fd: fd, arguments: [], manualClock: true, maxBytes: maxBytes, budget: budget)
        recorder.configure(
            redaction: Redaction(plainInputs: ["username"], secretInputs: ["password"], secretMembers: ["token"]),
            secretMembers: ["token"])
        return (recorder, path)
    }

    func contents(_ path: String) -> String {
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        _ = stat(path, &info)
        return info.st_mode & 0o777
    }

    @Test(arguments: [
        // By position, alone and in a batch.
        #"{"jsonrpc":"2.0","id":1,"method":"vm.send","params":["l","password","hunter2-pw"]}"#,
        #"[{"jsonrpc":"2.0","id":1,"method":"vm.send","params":["l","password","hunter2-pw"]},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
        // A member vm.send does not take, beside a plain input and alone.
        #"{"jsonrpc":"2.0","id":1,"method":"vm.send","params":{"vm":"l","input":"username","value":"u","pin":"hunter2-pw"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"vm.send","params":{"vm":"l","extra":{"deep":["hunter2-pw"]}}}"#,
        // A vm or an input that is no string.
        #"{"jsonrpc":"2.0","id":1,"method":"vm.send","params":{"vm":{"x":"hunter2-pw"},"input":"username","value":"u"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"vm.send","params":{"vm":"l","input":["hunter2-pw"],"value":"u"}}"#,
        // Params that are no structure at all.
        #"{"jsonrpc":"2.0","id":1,"method":"vm.send","params":"hunter2-pw"}"#,
    ])
    @HostActor
    func aMalformedSendIsMaskedAsTheTraceMasksIt(_ text: String) throws {
        let (recorder, path) = try recorder()
        defer { unlink(path) }
        let message = try JSON.parse(Array(text.utf8))
        recorder.incoming(message)
        // The host's answer quoting it: never in clear either.
        recorder.outgoing(Array(#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad params hunter2-pw"}}"#.utf8))
        recorder.finish()
        let written = contents(path)
        #expect(!written.contains(Self.secret), "\(written)")
        #expect(written.contains("$secret:"), "\(written)")
        // The trace masks the same message.
        let trace = Redaction(plainInputs: ["username"], secretInputs: ["password"], secretMembers: ["token"]).redact(message)
        #expect(!String(decoding: trace.serialized(), as: UTF8.self).contains(Self.secret))
    }

    /// One rule decides what of a `vm.send` is secret (``Redaction/sendMember(_:_:of:)``): the
    /// members the trace masks are exactly those the recording writes as placeholders.
    @Test(arguments: [
        #"{"vm":"l","input":"username","value":"u-1"}"#,
        #"{"vm":"l","input":"password","value":"pw-1"}"#,
        #"{"vm":"l","input":"unknown","value":"x-1"}"#,
        #"{"vm":"l","value":"v-1"}"#,
        #"{"vm":"l","input":"username","value":"u-2","pin":"p-1"}"#,
        #"{"vm":{"a":"b-1"},"input":["i-1"],"value":"u-3"}"#,
    ])
    @HostActor
    func theTraceAndTheRecordingMaskTheSameMembersOfASend(_ text: String) throws {
        let (recorder, path) = try recorder()
        defer { unlink(path) }
        let params = try JSON.parse(Array(text.utf8))
        let message: JSON = ["jsonrpc": "2.0", "id": 1, "method": "vm.send", "params": params]
        recorder.incoming(message)
        recorder.finish()
        let steps = try RecordingSteps.values(of: Array(contents(path).utf8))
        let recorded = try #require(steps.first { $0["send"] != nil }?["send"]?["params"]?.objectValue)
        let traced = try #require(
            Redaction(plainInputs: ["username"], secretInputs: ["password"], secretMembers: ["token"])
                .redact(message)["params"]?.objectValue)
        for member in try #require(params.objectValue) {
            let masked = traced[member.key] == "***"
            #expect(masked == (recorded[member.key] != member.value), "\(member.key) in \(text)")
        }
    }

    /// A `send` the user did (a `vm.send`: a keystroke, a press) carries a `user` marker naming
    /// its input, before the `send`; creating, subscribing, a test control and a batch carry none.
    /// The marker is taken from the recorded form: an input named like a secret is masked there too.
    @Test @HostActor
    func eachUsersActionIsMarkedWithItsInput() throws {
        let (recorder, path) = try recorder()
        defer { unlink(path) }
        for text in [
            #"{"jsonrpc":"2.0","id":1,"method":"vm.create","params":{"kind":"Login","id":"l"}}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"vm.send","params":{"vm":"l","input":"username","value":"138"}}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"vm.send","params":{"vm":"l","input":"password","value":"hunter2-pw"}}"#,
            #"{"jsonrpc":"2.0","method":"vm.send","params":{"vm":"l","input":"submit"}}"#,
            #"{"jsonrpc":"2.0","id":4,"method":"control.clock.advance","params":{"ms":1000}}"#,
            #"[{"jsonrpc":"2.0","id":5,"method":"vm.send","params":{"vm":"l","input":"username","value":"1"}}]"#,
            #"{"jsonrpc":"2.0","id":6,"method":"vm.send","params":{"vm":"l","input":"hunter2-pw","value":"x"}}"#,
        ] {
            recorder.incoming(try JSON.parse(Array(text.utf8)))
        }
        recorder.finish()
        let written = contents(path)
        let sends = RecordingSteps.steps(of: Array(written.utf8)).map { String(decoding: $0.text, as: UTF8.self) }
            .filter { $0.contains(#""send":"#) }
        #expect(sends.count == 7, "\(written)")
        #expect(sends.allSatisfy { !$0.contains(Self.secret) }, "\(sends)")
        #expect(sends[0].hasPrefix(#"{"send":"#))
        #expect(sends[1].hasPrefix(#"{"user":"username","send":"#))
        #expect(sends[2].hasPrefix(#"{"user":"password","send":"#))
        #expect(sends[3].hasPrefix(#"{"user":"submit","send":"#))
        #expect(sends[4].hasPrefix(#"{"send":"#))
        #expect(sends[5].hasPrefix(#"{"send":"#))
        #expect(sends[6].hasPrefix(#"{"user":"$secret:password:10","send":"#), "\(sends[6])")
    }

    /// Each step is written as the replayers' `--update` writes it (protocol/conformance/README.md,
    /// "Layout"): a short one on one line, a long `send` or `expect` a member or element per line,
    /// so that an update of an unchanged recording changes nothing and a changed value changes the
    /// lines that hold it.
    @Test @HostActor
    func aLongStepIsLaidOutAsTheReplayersLayItOut() throws {
        let (recorder, path) = try recorder()
        defer { unlink(path) }
        let items = (1...20).map { n -> JSON in ["id": .string("p\(n)"), "name": .string("Steady Growth \(n)"), "profit": "4.35%"] }
        recorder.incoming(["jsonrpc": "2.0", "id": 1, "method": "ping"])
        recorder.outgoing(Array(#"{"jsonrpc":"2.0","id":1,"result":{}}"#.utf8))
        let changed: JSON = ["jsonrpc": "2.0", "method": "vm.changed", "params": ["vm": "p", "values": ["items": .array(items)]]]
        recorder.outgoing(changed.serialized())
        recorder.finish()
        let written = contents(path)
        let steps = try RecordingSteps.values(of: Array(written.utf8))
        #expect(written == steps.map { String(decoding: RecordingSteps.text(of: $0), as: UTF8.self) + "\n" }.joined())
        let lines = written.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let first = try #require(lines.firstIndex(of: #"{"expect":{"#))
        #expect(lines[first + 1] == #"  "jsonrpc":"2.0","#)
        #expect(lines.contains(#"        {"id":"p7","name":"Steady Growth 7","profit":"4.35%"},"#), "\(written)")
        #expect(lines.contains(#"{"expect":{"jsonrpc":"2.0","id":1,"result":{}}}"#))
        #expect(steps.contains(["expect": changed]))
        let last = try #require(lines[first...].firstIndex(of: "}}"))
        #expect(last - first > 20 && lines[first...last].allSatisfy { $0.unicodeScalars.count <= RecordingSteps.width }, "\(written)")
    }

    @Test @HostActor
    func theRecordingIsTheOwnersOnlyWhetherMadeOrEmptied() throws {
        let (recorder, path) = try recorder()
        defer { unlink(path) }
        recorder.finish()
        #expect(mode(path) == 0o600)
        chmod(path, 0o644)
        close(try SessionRecorder.create(path: path))
        #expect(mode(path) == 0o600)
        let directory = "/tmp/vmhost-recordings-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        try SessionRecorder.prepare(directory: directory)
        let file = try SessionRecorder.createSessionFile(in: directory, first: 1)
        close(file.fd)
        #expect(mode(directory) == 0o700)
        #expect(mode(file.path) == 0o600)
        unlink(file.path)
        rmdir(directory)
    }

    @Test @HostActor
    func aRecordingStopsAtItsBoundWithACommentAndRecordsNothingMore() throws {
        let bound = 4096
        let (recorder, path) = try recorder(maxBytes: bound)
        defer { unlink(path) }
        for id in 1...200 {
            recorder.incoming(["jsonrpc": "2.0", "id": .int(Int64(id)), "method": "ping"])
            recorder.outgoing(Array(#"{"jsonrpc":"2.0","id":\#(id),"result":{}}"#.utf8))
        }
        recorder.incoming(["jsonrpc": "2.0", "id": 1, "method": "vm.send", "params": ["vm": "l", "input": "password", "value": "late-secret"]])
        recorder.finish()
        let written = contents(path)
        let steps = try RecordingSteps.values(of: Array(written.utf8))
        #expect(written.utf8.count <= bound + 16 * 1024)
        #expect(steps.last?["comment"]?.stringValue?.hasPrefix("The recording stops here: it reached --max-record-bytes (4096 bytes)") == true, "\(steps.suffix(2))")
        #expect(!written.contains("late-secret") && !written.contains(#""id":200"#))
        #expect(!recorder.failed)
    }

    @Test @HostActor
    func theRecordingsOfAServerShareItsBound() throws {
        let budget = RecordingBudget(limit: 8192)
        let (first, firstPath) = try recorder(budget: budget)
        let (second, secondPath) = try recorder(budget: budget)
        defer { unlink(firstPath); unlink(secondPath) }
        for id in 1...40 {
            first.incoming(["jsonrpc": "2.0", "id": .int(Int64(id)), "method": "ping"])
        }
        for id in 1...200 {
            second.incoming(["jsonrpc": "2.0", "id": .int(Int64(id)), "method": "ping"])
        }
        first.finish()
        second.finish()
        let together = contents(firstPath).utf8.count + contents(secondPath).utf8.count
        #expect(together <= 8192 + 2 * 16 * 1024)
        #expect(contents(secondPath).contains("the recordings of this server reached --max-record-total-bytes (8192 bytes)"))
        #expect(contents(firstPath).contains(#""id":40"#))
    }
}
