#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
@_spi(Transport) import VMHostWire

/// The real `vmhost` executable driven through pipes, for tests that must see everything the
/// process wrote: its stdout (kept byte for byte), its stderr and its trace file (both files).
///
/// - Important: Blocking: use it from a nonisolated test, never from the host actor.
final class BinaryHost {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    /// Every byte the host wrote to stdout so far.
    private(set) var written: [UInt8] = []
    private var unread: [UInt8] = []
    private var nextID: Int64 = 0
    let stderrURL: URL

    /// Where the executable is: `$VMHOST_BIN`, else beside the test bundle (the same build).
    static var executableURL: URL {
        if let path = ProcessInfo.processInfo.environment["VMHOST_BIN"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("vmhost")
    }

    init(arguments: [String], stderrURL: URL) throws {
        self.stderrURL = stderrURL
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        process.executableURL = Self.executableURL
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        // A file, not a pipe: a chatty log can never fill a pipe nobody reads and stall the host.
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        try process.run()
    }

    /// Sends a request and returns every message up to and including its response.
    func request(_ method: String, _ params: JSON? = nil) throws -> [JSON] {
        nextID += 1
        let id = JSON.int(nextID)
        var message: JSONObject = ["jsonrpc": "2.0", "id": id, "method": .string(method)]
        if let params { message.append("params", params) }
        try send(.object(message))
        var messages: [JSON] = []
        while true {
            let next = try readMessage()
            messages.append(next)
            if next["id"] == id && next["method"] == nil { return messages }
        }
    }

    /// Sends a notification (no reply).
    func notify(_ method: String, _ params: JSON) throws {
        try send(["jsonrpc": "2.0", "method": .string(method), "params": params])
    }

    /// Closes stdin, reads stdout to its end and waits for the exit status.
    func finish() throws -> Int32 {
        try input.fileHandleForWriting.close()
        while try readChunk() {}
        process.waitUntilExit()
        return process.terminationStatus
    }

    private func send(_ message: JSON) throws {
        try input.fileHandleForWriting.write(contentsOf: Data(message.serialized() + [UInt8(ascii: "\n")]))
    }

    private func readMessage() throws -> JSON {
        while true {
            if let newline = unread.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(unread[..<newline])
                unread.removeSubrange(...newline)
                return try JSON.parse(line)
            }
            guard try readChunk() else { throw HostFailure("vmhost closed stdout") }
        }
    }

    /// Reads what is available (waiting at most 20 s, to turn a hang into a failure); false at EOF.
    private func readChunk() throws -> Bool {
        let fd = output.fileHandleForReading.fileDescriptor
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 20_000) > 0 else { throw HostFailure("vmhost wrote nothing for 20 s") }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = read(fd, &chunk, chunk.count)
        guard count > 0 else { return false }
        written += chunk[..<count]
        unread += chunk[..<count]
        return true
    }

    /// Runs blocking `body` on a new thread and waits for it without holding a pool thread.
    static func onThread(_ body: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                do { try body(); continuation.resume() } catch { continuation.resume(throwing: error) }
            }
            thread.start()
        }
    }

    struct HostFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
