#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostWire

extension SessionRecorder {
    struct State {
        var fd: Int32
        var arguments: [String]
        var offlineArguments: [String]?
        var headerComments: [String] = []
        var headerWritten = false
        /// A `close` step was written.
        var closed = false
        /// The host exits on `exit`, with this status.
        var exitStatus: Int?
        /// The ids of the requests read and not answered yet, in the order they were read (at most
        /// ``maxPending``: a batch refused whole is answered with no id, and its ids stay).
        var pending: [JSON] = []
        static let maxPending = 10_000
        var finished = false
        var writeFailed = false
        var redaction = Redaction(plainInputs: [], secretInputs: [])
        /// Subscription handles captured, by handle: the capture's name.
        var captures: [String: String] = [:]
        var endHooks: [@HostActor @Sendable () -> Void] = []

        /// The bound of this file, and the server's of every recording.
        let maxBytes: Int
        let budget: RecordingBudget
        /// The bytes written to this file.
        var written = 0

        init(fd: Int32, arguments: [String], maxBytes: Int, budget: RecordingBudget) {
            self.fd = fd
            self.arguments = arguments
            self.maxBytes = maxBytes
            self.budget = budget
        }

        var accepting: Bool { !finished && !writeFailed }

        /// The last lines: the `exit` step if the host exited on `exit`, the secrets a replay
        /// needs; then the file is closed.
        mutating func end() {
            guard !finished else { return }
            if let status = exitStatus { write(["exit": .int(Int64(status))], closing: true) }
            let needed = redaction.placeholderSummary(needed: true, limit: Self.closingRoom / 2)
            if !needed.isEmpty {
                write(["comment": .string(
                    "Secrets a replay needs (never written here): " + needed
                        + ". Give each as VMHOST_SECRET_<NAME> in the environment, or in a JSON file {\"NAME\": \"value\"} passed with --secrets.")],
                    closing: true)
            }
            let masked = redaction.placeholderSummary(needed: false, limit: Self.closingRoom / 4)
            if !masked.isEmpty {
                write(["comment": .string("Secrets masked in the app's lines only, which a replay does not need: " + masked + ".")], closing: true)
            }
            if !headerWritten { writeHeader() }
            finished = true
            close(fd)
        }

        /// The room kept past the bounds for the closing lines (the comment saying why the
        /// recording stopped, the secrets a replay needs).
        static let closingRoom = 16 * 1024

        mutating func writeHeader() {
            headerWritten = true
            var first: JSONObject = ["args": .array(arguments.map { .string($0) })]
            if let offlineArguments { first.append("offlineArgs", .array(offlineArguments.map { .string($0) })) }
            writeLine(.object(first))
            for comment in headerComments { writeLine(["comment": .string(comment)]) }
        }

        /// Writes the step `line` (after the header), in one write(2): on one line, or laid out
        /// over several as the replayers lay it out (``RecordingSteps/text(of:)``). A step past
        /// this file's bound or the server's is not written: a comment saying why ends the
        /// recording. `closing`: a step of its end, written within the room kept for it.
        mutating func write(_ line: JSON, closing: Bool = false) {
            if !headerWritten { writeHeader() }
            guard !finished else { return }
            var bytes = RecordingSteps.text(of: line)
            bytes.append(UInt8(ascii: "\n"))
            if closing {
                budget.add(bytes.count)
            } else if written > maxBytes - bytes.count {
                stop("it reached --max-record-bytes (\(maxBytes) bytes)")
                return
            } else if !budget.take(bytes.count) {
                stop("the recordings of this server reached --max-record-total-bytes (\(budget.limit) bytes)")
                return
            }
            writeBytes(bytes)
        }

        /// Ends the recording before the session: a comment saying why, then the end's lines.
        private mutating func stop(_ why: String) {
            write(["comment": .string(
                "The recording stops here: \(why). The session went on unrecorded; a replay of this file ends here, "
                    + "and fails if the host still had something to write.")], closing: true)
            end()
        }

        private mutating func writeLine(_ line: JSON) {
            var bytes = RecordingSteps.text(of: line)
            bytes.append(UInt8(ascii: "\n"))
            budget.add(bytes.count)
            writeBytes(bytes)
        }

        private mutating func writeBytes(_ bytes: [UInt8]) {
            guard !writeFailed else { return }
            written += bytes.count
            var offset = 0
            while offset < bytes.count {
                let count = bytes.withUnsafeBytes { buffer in
                    systemWrite(fd, buffer.baseAddress! + offset, buffer.count - offset)
                }
                if count < 0 {
                    if errno == EINTR { continue }
                    writeFailed = true
                    return
                }
                offset += count
            }
        }

        // MARK: Requests not answered yet

        /// The ids of the requests in `message` (one, or a batch's), as pending.
        mutating func noteRequests(in message: JSON) {
            switch message {
            case .array(let elements):
                for element in elements { noteRequests(in: element) }
            case .object(let object):
                guard object["method"]?.stringValue != nil, let id = object["id"] else { return }
                switch id {
                case .string, .int, .double:
                    if pending.count >= Self.maxPending { pending.removeFirst() }
                    pending.append(id)
                default: return  // an id the host refuses (-32600): answered at once
                }
            default:
                return
            }
        }

        /// The requests `message` answers (one response, or a batch's) are no longer pending.
        mutating func noteResponses(in message: JSON) {
            switch message {
            case .array(let elements):
                for element in elements { noteResponses(in: element) }
            case .object(let object):
                guard object["result"] != nil || object["error"] != nil, let id = object["id"],
                    let index = pending.firstIndex(of: id)
                else { return }
                pending.remove(at: index)
            default:
                return
            }
        }
    }
}

/// write(2), whichever C library declares it.
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, bytes, count)
    #else
    Darwin.write(fd, bytes, count)
    #endif
}
