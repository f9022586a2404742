#if canImport(Glibc)
import Glibc
#endif
import Testing
@_spi(Transport) @testable import VMHostWire

/// A mergeable message for tests: one named value, latest wins.
private struct Value: MergeableMessage {
    var text: String
    mutating func merge(_ newer: Value) { text = newer.text }
    func encode() -> [UInt8] { Array(text.utf8) }
}

/// A pipe whose write end an ``OutputWriter`` writes; the test reads the other end.
private final class Pipe {
    let readEnd: Int32
    let writeEnd: Int32

    init(capacity: Int32? = nil) {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        readEnd = fds[0]
        writeEnd = fds[1]
        if let capacity { _ = fcntl(writeEnd, 1031 /* F_SETPIPE_SZ */, capacity) }
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// What can be read now, without waiting.
    func readAvailable() -> String {
        let flags = fcntl(readEnd, F_GETFL)
        _ = fcntl(readEnd, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(readEnd, F_SETFL, flags) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(readEnd, &chunk, chunk.count)
            if n <= 0 { break }
            bytes += chunk[..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads, waiting as needed, until a line equal to `last` has arrived.
    func readLines(through last: String) -> [String] {
        var lines: [String] = []
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while lines.last != last {
            let n = read(readEnd, &chunk, chunk.count)
            if n <= 0 { break }
            pending += chunk[..<n]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
        }
        return lines
    }
}

@Suite("Output writer")
struct OutputWriterTests {
    @Test func theProducerWritesAtItsFlushAndTheThreadStaysOut() {
        let pipe = Pipe()
        let queue = OutputQueue<Value>()
        let writer = OutputWriter(fd: pipe.writeEnd, framing: .ndjson, queue: queue, producerWrites: true, onClosed: {})
        #expect(writer.producerWrites)
        queue.push(Array("one".utf8))
        queue.push(merging: Value(text: "two"), key: 1)
        // Nothing is written until the producer flushes: the thread is not woken by pushes.
        #expect(pipe.readAvailable() == "")
        writer.flush()
        // Written by the flush itself, before it returned.
        #expect(pipe.readAvailable() == "one\ntwo\n")
        queue.close()
        #expect(queue.waitUntilFlushed(nanoseconds: 5_000_000_000))
    }

    @Test func aFullOutputIsFinishedByTheThreadWhileChangesMerge() {
        let pipe = Pipe(capacity: 4096)
        let queue = OutputQueue<Value>()
        let writer = OutputWriter(fd: pipe.writeEnd, framing: .ndjson, queue: queue, producerWrites: true, onClosed: {})
        let big = String(repeating: "x", count: 1000)
        for i in 0..<10 { queue.push(Array("\(i)\(big)".utf8)) }
        writer.flush()
        // The pipe took what fit; the rest went to the thread, which waits for room. Meanwhile the
        // queue counts as stalled, so changes of one key merge into one.
        for i in 0..<1000 { queue.push(merging: Value(text: "v\(i)"), key: 7) }
        queue.push(Array("reply".utf8))
        writer.flush()
        let lines = pipe.readLines(through: "reply")
        #expect(lines.prefix(10).map { String($0.prefix(1)) } == (0..<10).map { "\($0)" })
        #expect(lines.prefix(10).allSatisfy { $0.count == 1001 })
        // The thread takes what waits when it wakes; every change pushed after that merged into
        // one. So one or two changes, the last one latest, then the reply.
        let changes = lines.dropFirst(10).dropLast()
        #expect((1...2).contains(changes.count))
        #expect(changes.allSatisfy { $0.hasPrefix("v") })
        #expect(changes.last == "v999")
        #expect(lines.last == "reply")
        // Whoever owns the output now, later messages still arrive, in order.
        queue.push(Array("after".utf8))
        writer.flush()
        #expect(pipe.readLines(through: "after") == ["after"])
        queue.close()
        #expect(queue.waitUntilFlushed(nanoseconds: 5_000_000_000))
    }

    @Test func whatIsQueuedAtCloseIsStillWritten() {
        let pipe = Pipe()
        let queue = OutputQueue<Value>()
        _ = OutputWriter(fd: pipe.writeEnd, framing: .lsp, queue: queue, producerWrites: true, onClosed: {})
        queue.push(Array("{}".utf8))
        queue.close()
        #expect(queue.waitUntilFlushed(nanoseconds: 5_000_000_000))
        #expect(pipe.readAvailable() == "Content-Length: 2\r\n\r\n{}")
    }

    @Test func aFileIsWrittenByTheThreadEvenWhenTheProducerWouldWrite() throws {
        let path = "/tmp/vmhost-writer-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        try #require(fd >= 0)
        defer { close(fd); unlink(path) }
        let queue = OutputQueue<Value>()
        let writer = OutputWriter(fd: fd, framing: .ndjson, queue: queue, producerWrites: true, onClosed: {})
        #expect(!writer.producerWrites)
        queue.push(Array("line".utf8))
        queue.close()
        #expect(queue.waitUntilFlushed(nanoseconds: 5_000_000_000))
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_size == 5)
    }
}
