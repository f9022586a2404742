import Testing
@testable import VMHostWebSocket

/// What resuming a session rests on, without a socket: the log of frames written and received,
/// the ack frame, the handshake's query, the supervisor's reading of a request line.
@Suite struct ResumeTests {
    static func frame(_ byte: UInt8, bytes: Int = 10) -> [UInt8] { [UInt8](repeating: byte, count: bytes) }

    @Test func framesAreNumberedFromOneAndKeptUntilAcknowledged() {
        var log = ResumeLog(maxBytes: 1000)
        #expect(log.append(Self.frame(1)) == 1)
        #expect(log.append(Self.frame(2)) == 2)
        #expect(log.append(Self.frame(3)) == 3)
        #expect(log.frames(after: 0) == [Self.frame(1), Self.frame(2), Self.frame(3)])
        #expect(log.frames(after: 2) == [Self.frame(3)])
        #expect(log.frames(after: 3) == [])
        #expect(log.acknowledge(2) == 2)
        #expect(log.bytes == 10 && log.first == 3)
        // Acknowledged already: nothing to forget; behind it or beyond what was written: wrong.
        #expect(log.acknowledge(2) == 0)
        #expect(log.acknowledge(1) == nil)
        #expect(log.acknowledge(4) == nil)
        #expect(log.frames(after: 1) == nil)
        #expect(log.frames(after: 4) == nil)
        #expect(log.frames(after: 2) == [Self.frame(3)])
    }

    @Test func pastTheBoundTheOldestIsDroppedAndTheResumeIsAResync() {
        var log = ResumeLog(maxBytes: 25)
        log.append(Self.frame(1))
        log.append(Self.frame(2))
        #expect(!log.overflowed)
        log.append(Self.frame(3))
        #expect(log.overflowed && log.first == 2 && log.bytes == 20)
        #expect(log.frames(after: 0) == nil)
        // A frame larger than the bound is kept alone (the last written always is).
        log.append(Self.frame(4, bytes: 100))
        #expect(log.first == 4 && log.bytes == 100)
        log.resynced()
        #expect(!log.overflowed && log.first == 5 && log.bytes == 0 && log.frames(after: 4) == [])
        log.append(Self.frame(5))
        log.lose()
        #expect(log.overflowed && log.frames(after: 4) == nil && log.written == 5)
    }

    @Test func aLongLogGivesBackItsRoom() {
        var log = ResumeLog(maxBytes: 1 << 20)
        for number in 1...10_000 {
            log.append(Self.frame(UInt8(truncatingIfNeeded: number)))
            if number % 10 == 0 { #expect(log.acknowledge(number) == 10) }
        }
        #expect(log.frames.count < 100 && log.bytes == 0 && log.first == 10_001)
    }

    @Test func receivedFramesAreCounted() {
        var log = ResumeLog(maxBytes: 10)
        #expect(log.received() == 1)
        #expect(log.received() == 2)
        #expect(log.receivedCount == 2)
    }

    @Test func anAckIsReadWhateverTheOrderOfItsMembers() {
        #expect(AckFrame.received(in: Array(#"{"jsonrpc":"2.0","method":"$/ack","params":{"received":7}}"#.utf8)) == 7)
        #expect(AckFrame.received(in: Array(#" { "params" : {"received": 0}, "method": "$/ack", "jsonrpc": "2.0" } "#.utf8)) == 0)
        for text in [
            #"{"jsonrpc":"2.0","id":1,"method":"$/ack","params":{"received":7}}"#,  // a request
            #"{"jsonrpc":"2.0","method":"$/ack","params":{"received":-1}}"#,
            #"{"jsonrpc":"2.0","method":"$/ack","params":{"received":1.5}}"#,
            #"{"jsonrpc":"2.0","method":"$/ack","params":{"received":7,"more":1}}"#,
            #"{"jsonrpc":"2.0","method":"$/ack"}"#,
            #"{"jsonrpc":"2.0","method":"vm.send","params":{"value":"$/ack"}}"#,
            #"[{"jsonrpc":"2.0","method":"$/ack","params":{"received":7}}]"#,
            #"{"jsonrpc":"2.0","method":"$/ack","params":{"received":7}"#,
        ] {
            #expect(AckFrame.received(in: Array(text.utf8)) == nil, "\(text)")
        }
        let long = #"{"jsonrpc":"2.0","method":"$/ack","params":{"received":7}}"# + String(repeating: " ", count: 300)
        #expect(AckFrame.received(in: Array(long.utf8)) == nil)
    }

    @Test func theQueryOfAHandshake() {
        #expect(ResumeRequest.parse(path: "/rpc") == .success(.none))
        #expect(ResumeRequest.parse(path: "/rpc?token=x") == .success(.none))
        #expect(ResumeRequest.parse(path: "/rpc?resume=new") == .success(.new))
        #expect(ResumeRequest.parse(path: "/rpc?token=x&resume=2.ab-_C&received=12") == .success(.resume(token: "2.ab-_C", received: 12)))
        for path in [
            "/rpc?received=1", "/rpc?resume=new&received=1", "/rpc?resume=abc", "/rpc?resume=abc&received=-1",
            "/rpc?resume=abc&received=01", "/rpc?resume=abc&received=1x", "/rpc?resume=a%20b&received=1",
            "/rpc?resume=&received=1", "/rpc?resume=a&resume=b&received=1", "/rpc?resume=a&received=1&received=2",
            "/rpc?resume=" + String(repeating: "a", count: 129) + "&received=1",
        ] {
            guard case .failure = ResumeRequest.parse(path: path) else {
                Issue.record("accepted \(path)")
                continue
            }
        }
    }

    @Test func tokensAreLongRandomAndNameTheirWorker() {
        let first = Resumption.makeToken(worker: 3), second = Resumption.makeToken(worker: 3)
        #expect(first != second)
        #expect(first.hasPrefix("3.") && first.count == 2 + 43)
        guard case .success(.resume(let token, 0)) = ResumeRequest.parse(path: "/rpc?resume=\(first)&received=0") else {
            Issue.record("a token the server gives is refused: \(first)")
            return
        }
        #expect(token == first)
        #expect(Resumption.base64URL([0xFB, 0xFF]) == "-_8")
        #expect(Resumption.base64URL(Array("Man".utf8)) == "TWFu")
    }

    @Test func theSupervisorRoutesAResumeByItsRequestLine() {
        func route(_ text: String, workers: Int = 4) -> FirstLine.Route {
            FirstLine.route(of: ArraySlice(Array(text.utf8)), workers: workers)
        }
        #expect(route("GET /rpc?resume=3.abc&received=5 HTTP/1.1\r\nHost: x\r\n") == .worker(2))
        #expect(route("GET /rpc?resume=new HTTP/1.1\r\n") == .worker(nil))
        #expect(route("GET /rpc HTTP/1.1\r\n") == .worker(nil))
        #expect(route("GET /web/demo/ HTTP/1.1\r\n") == .worker(nil))
        #expect(route("GET /rpc?resume=5.abc&received=5 HTTP/1.1\r\n") == .worker(nil))  // no such worker
        #expect(route("GET /rpc?resume=0.abc&received=5 HTTP/1.1\r\n") == .worker(nil))
        #expect(route("POST /rpc?resume=3.abc&received=5 HTTP/1.1\r\n") == .worker(nil))
        // Not whole yet: wait (until the deadline); nothing at all: the peer closed.
        #expect(route("GET /rpc?resume=3.a") == .notYet)
        #expect(route("") == .worker(nil))
        #expect(route(String(repeating: "G", count: FirstLine.peekBytes)) == .worker(nil))
    }
}
