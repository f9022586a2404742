#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Backend
import Testing
import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// `--backend recorded:FILE` (protocol/backend.md, "Recorded backend"): calls answered from the
/// lines a recording kept, matched by method, path and body, each line used once.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct RecordedBackendTests {
    let clock = ManualClock()

    func backend(_ lines: String...) throws -> RecordedBackend {
        let exchanges = try lines.map { text in try RecordedExchange(json: JSON.parse(text)) }
        return RecordedBackend(exchanges: exchanges, clock: clock, timeout: .seconds(15))
    }

    @Test
    func aRecordedSecretInABodyStandsForAnyTextAndTheTokenStaysItsPlaceholder() async throws {
        let api = try backend(
            #"{"method":"POST","path":"/auth/login","body":{"username":"13800138000","password":"$secret:password:6"},"ms":0,"response":{"success":true,"code":"0","message":"ok","data":{"token":"$secret:token:12"}}}"#
        )
        let session = try await api.login(username: "13800138000", password: "another")
        #expect(session.token == "$secret:token:12")
        #expect(api.remainingCount == 0)
    }

    @Test
    func everyCredentialLikeMemberOfABodyOrAnAnswerIsMaskedAtAnyDepth() throws {
        let exchange = RecordedExchange(
            method: "POST", path: "/auth/login",
            body: ["username": "13800138000", "Password": "pw-1", "otp_code": "4242", "device": ["apiKey": "k-9"]],
            milliseconds: 0,
            outcome: .response(try Envelope(json: JSON.parse(
                #"{"success":true,"code":"0","message":"ok","data":{"token":"t-1","refreshToken":"r-1","session":{"accessToken":"a-1","expires":3600},"smsCode":"424242","client_secret":["s-1"],"credentials":{"user":"u-1"},"name":"稳健增利1号"}}"#
            ))))
        var masked: [String] = []
        let line = exchange.json { value, member in
            masked.append(value)
            return "$secret:\(member)"
        }
        let text = String(decoding: line.serialized(), as: UTF8.self)
        for secret in ["pw-1", "4242", "k-9", "t-1", "r-1", "a-1", "424242", "s-1", "u-1"] {
            #expect(!text.contains("\"\(secret)\""), "\(secret) in \(text)")
        }
        #expect(text.contains(#""username":"13800138000""#) && text.contains(#""name":"稳健增利1号""#))
        #expect(text.contains(#""expires":3600"#) && text.contains(#""code":"0""#))
        #expect(RecordedExchange.isCredential("refresh-TOKEN") && !RecordedExchange.isCredential("dishCount"))
    }

    @Test
    func aRecordedBackendThatIsAFIFOIsRefusedWithoutWaiting() throws {
        let path = "/tmp/vmhost-recorded-fifo-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        #expect(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        #expect(throws: RecordedBackendError.self) {
            _ = try RecordedBackend(path: path, clock: clock, timeout: .seconds(15))
        }
        do {
            _ = try RecordedBackend(path: path, clock: clock, timeout: .seconds(15))
        } catch {
            #expect(error.message.contains("is not a regular file"))
        }
    }

    @Test
    func aStepLaidOutOverSeveralLinesIsReadAsOneAndItsBackendLinesAnswer() async throws {
        // An expectation `--update` laid out (protocol/conformance/README.md, "Layout"): its
        // lines are one step, no exchange; the backend line after it answers.
        let path = "/tmp/vmhost-recorded-layout-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).jsonl"
        defer { unlink(path) }
        let backendLine = #"{"backend":{"method":"GET","path":"/menus/m1/groups","ms":0,"response":{"success":true,"code":"0","message":"ok","data":[{"id":"g1","name":"招牌热菜","dishCount":12}]}}}"#
        let laidOut = "{\"expect\":{\n  \"jsonrpc\":\"2.0\",\n  \"id\":2,\n  \"result\":{}\n}}"
        try writeFile(#"{"args":[]}"# + "\n" + laidOut + "\n\n" + backendLine + "\n", to: path)
        let api = try RecordedBackend(path: path, clock: clock, timeout: .seconds(15))
        #expect(api.remainingCount == 1)
        #expect(try await api.groups(menuUid: "m1") == [MenuGroup(id: "g1", name: "招牌热菜", dishCount: 12)])
        // A laid-out step that is no JSON is named by the line where reading it stopped.
        try writeFile(#"{"args":[]}"# + "\n" + laidOut + "\n  oops\n" + backendLine + "\n", to: path)
        do {
            _ = try RecordedBackend(path: path, clock: clock, timeout: .seconds(15))
            Issue.record("a step that is no JSON was read")
        } catch {
            #expect(error.message.contains(":7: not JSON"), "\(error.message)")
        }
    }

    private func writeFile(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        #expect(fd >= 0)
        defer { close(fd) }
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
    }

    @Test
    func aBodyThatDiffersOutsideASecretFindsNoAnswerAndSaysWhy() async throws {
        let api = try backend(
            #"{"method":"POST","path":"/auth/login","body":{"username":"13800138000","password":"$secret:password:6"},"ms":0,"response":{"success":true,"code":"0","message":"ok","data":{"token":"t"}}}"#
        )
        let error = await backendError { _ = try await api.login(username: "13900000000", password: "123456") }
        #expect(error?.kind == .network)
        #expect(error?.detail.contains("no recorded answer for POST /auth/login") == true)
        #expect(error?.detail.contains("the others with another body") == true)
        #expect(api.remainingCount == 1)
    }

    @Test
    func eachLineAnswersOnceInOrderAndAFailureComesBackAsRecorded() async throws {
        let api = try backend(
            #"{"method":"GET","path":"/menus/m1/groups","ms":0,"error":{"kind":"server","code":503,"detail":"the server answered HTTP 503"}}"#,
            #"{"method":"GET","path":"/menus/m1/groups","ms":0,"response":{"success":true,"code":"0","message":"ok","data":[{"id":"g1","name":"招牌热菜","dishCount":12}]}}"#
        )
        let failed = await backendError { _ = try await api.groups(menuUid: "m1") }
        #expect(failed?.kind == .server && failed?.code == 503)
        #expect(try await api.groups(menuUid: "m1") == [MenuGroup(id: "g1", name: "招牌热菜", dishCount: 12)])
        let third = await backendError { _ = try await api.groups(menuUid: "m1") }
        #expect(third?.kind == .network)
        #expect(third?.detail.contains("2 recorded for this method and path, 2 used") == true)
        let other = await backendError { _ = try await api.groups(menuUid: "m2") }
        #expect(other?.detail.contains("none was recorded for this method and path") == true)
    }

    @Test
    func aLineIsWrittenAndReadBackWithItsSecretsMasked() throws {
        let exchange = RecordedExchange(
            method: "POST", path: "/auth/login-code", body: ["phone": "13800000000", "code": "123456"], milliseconds: 250,
            outcome: .response(try Envelope(json: JSON.parse(#"{"success":true,"code":"0","message":"ok","data":{"token":"tok-1"}}"#))))
        var masked: [String: String] = [:]
        let line = exchange.json { value, name in
            masked[name] = value
            return "$secret:\(name):\(value.count)"
        }
        #expect(masked == ["code": "123456", "token": "tok-1"])
        let text = String(decoding: line.serialized(), as: UTF8.self)
        #expect(!text.contains("123456") && !text.contains("tok-1"))
        let read = try RecordedExchange(json: line)
        #expect(read.body == ["phone": "13800000000", "code": "$secret:code:6"])
        #expect(read.milliseconds == 250)
    }

    @Test(arguments: [
        (#"{"method":"GET","path":"/x","ms":86400001,"cancelled":true}"#, "ms: expected an integer from 0 to 86400000"),
        (#"{"method":"PATCH","path":"/x","ms":0,"cancelled":true}"#, "method: expected one of"),
        (#"{"method":"GET","path":"x","ms":0,"cancelled":true}"#, "path: expected a string starting with /"),
        (#"{"method":"GET","path":"/x","ms":0,"cancelled":false}"#, "cancelled: expected true"),
        (#"{"method":"GET","path":"/x","ms":0,"error":{"kind":"gone","detail":"d"}}"#, "error.kind: expected one of"),
        (#"{"method":"GET","path":"/x","ms":0,"error":{"kind":"server","code":1.5,"detail":"d"}}"#, "error.code"),
        (#"[1]"#, "expected an object"),
    ])
    func aMalformedLineSaysWhichMemberIsWrong(line: String, says: String) throws {
        let json = try JSON.parse(line)
        do throws(RecordedBackendError) {
            _ = try RecordedExchange(json: json)
            Issue.record("\(line) was accepted")
        } catch {
            #expect(error.message.contains(says), "\(error.message)")
        }
    }
}
