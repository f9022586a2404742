#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VMHost
import VMHostEmbedding
@_spi(Transport) import VMHostEventLoop
import VMHostWire

/// The C ABI of include/vmhost.h fed one fuzz input as a client would write it, through the real
/// entry points (`vmhost_write`, `vmhost_close`; the app's `vmhost_open` is ``VMHostABI/open``
/// with the server below). Two hosts take the same input: one in a single `vmhost_write`, one in
/// writes of the sizes ``WireFuzzing/chunkSizes(_:)`` gives. Called on the host thread (where
/// libFuzzer runs), so a write is queued and a close returns at once: the probe drains the loop
/// until each host has ended.
///
/// Invariants:
/// - every write of bytes is taken (`VMHOST_OK`) until the host has ended by itself (`exit`), and
///   refused as closed (`VMHOST_ERR_CLOSED`) from then on; a write of zero bytes and a null buffer
///   are refused as arguments; nothing traps;
/// - every message delivered is one whole JSON text, an object or a non-empty array;
/// - both hosts deliver the same messages, byte for byte: what the host does never depends on how
///   the caller split its writes;
/// - the host ends after the close, with one last call (NULL, 0) and none after it; its status
///   is 0 or 1; its handle is then refused by a write and a second close (`VMHOST_ERR_HANDLE`).
@HostActor
enum ABIProbe {
    /// What one host delivered, through the C callback (its context).
    final class Inbox {
        var messages: [[UInt8]] = []
        var ended = false
        var callsAfterEnd = 0
    }

    static let arguments = ["--clock", "manual", "--test-controls", "--max-message-bytes", "4096"]

    /// A server of one small kind: a property, a trigger, commands on the manual clock.
    static let server = Server(name: "fuzz", version: "1.0.0") { _ in
        ServedApp(kinds: [FuzzCounter.factory()])
    }

    static func run(_ input: UnsafeRawBufferPointer, chunkSizes: [Int]) {
        let whole = feed(input, sizes: [input.count])
        let pieces = feed(input, sizes: chunkSizes)
        precondition(
            whole == pieces,
            "the ABI delivered \(whole.count) messages for one write, \(pieces.count) for writes of \(chunkSizes.prefix(20))")
    }

    /// Opens a host, writes `input` in writes of `sizes`, closes it; the messages it delivered.
    static func feed(_ input: UnsafeRawBufferPointer, sizes: [Int]) -> [[UInt8]] {
        let inbox = Inbox()
        let context = Unmanaged.passRetained(inbox)
        defer { context.release() }
        var handle: vmhost_handle = 0
        let opened = withCStrings(arguments) { argv in
            VMHostABI.open(server, Int32(arguments.count), argv, { context, message, length in
                let inbox = Unmanaged<Inbox>.fromOpaque(context!).takeUnretainedValue()
                if inbox.ended { inbox.callsAfterEnd += 1 }
                guard let message else {
                    precondition(length == 0, "the last call has a length")
                    inbox.ended = true
                    return
                }
                let bytes = Array(UnsafeRawBufferPointer(start: message, count: length))
                guard let json = try? JSON.parse(bytes) else { preconditionFailure("a message that is no JSON text") }
                switch json {
                case .object: break
                case .array(let members): precondition(!members.isEmpty, "an empty batch reply")
                default: preconditionFailure("a message that is neither an object nor an array")
                }
                inbox.messages.append(bytes)
            }, nil, context.toOpaque(), &handle)
        }
        precondition(opened == Int32(VMHOST_OK) && handle != 0, "vmhost_open answered \(opened)")
        precondition(vmhost_write(handle, input.baseAddress, 0) == Int32(VMHOST_ERR_ARGUMENT), "a zero-length write was taken")
        precondition(vmhost_write(handle, nil, 1) == Int32(VMHOST_ERR_ARGUMENT), "a null buffer was taken")

        var offset = 0
        var sizes = sizes.makeIterator()
        var refused = false
        while offset < input.count {
            let size = min(sizes.next() ?? input.count, input.count - offset)
            let code = vmhost_write(handle, input.baseAddress! + offset, size)
            if refused {
                precondition(code == Int32(VMHOST_ERR_CLOSED), "a write after the end answered \(code)")
            } else if code != Int32(VMHOST_OK) {
                precondition(code == Int32(VMHOST_ERR_CLOSED), "a write answered \(code)")
                refused = true
            }
            offset += size
            // Queued on the host thread: handled now, as the loop would between two reads (the
            // whole fuzz run is one closure on the loop, whose own drains leave closures alone).
            EventLoop.shared.drainIncludingClosures()
            if !refused, inbox.ended { refused = true }
        }
        var status: Int32 = -2
        let closed = vmhost_close(handle, &status)
        precondition(closed == Int32(VMHOST_OK), "vmhost_close answered \(closed)")
        for _ in 0..<1000 where !inbox.ended { EventLoop.shared.drainIncludingClosures() }
        precondition(inbox.ended, "the host did not end after its close")
        precondition(inbox.callsAfterEnd == 0, "\(inbox.callsAfterEnd) calls after the last")
        precondition(vmhost_write(handle, input.baseAddress, max(1, input.count)) == Int32(VMHOST_ERR_HANDLE) || input.count == 0,
                     "a write after the close was not refused")
        precondition(vmhost_close(handle, &status) == Int32(VMHOST_ERR_HANDLE), "a second close was not refused")
        return inbox.messages
    }

    /// `body` with `strings` as a C `argv`.
    static func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// A small kind for the probe: a property (`count`), a field, a trigger, and commands that wait for
/// the manual clock or fail.
@HostActor
final class FuzzCounter: ViewModel {
    static let kind = "Counter"

    struct Args: ViewModelArgs {
        var start: Int
        init(reader: ObjectReader) throws(JSONDecodingError) {
            start = try reader.optional("start", default: 0)
        }
    }

    @Output var count = 0
    @Field var text = ""
    let increment = Trigger { vm in vm.count += 1 }
    let wait = Command(.latest, of: JSON.self, returning: Int.self) { vm, value in
        try await vm.context.clock.sleep(for: .milliseconds(value["ms"]?.intValue ?? 100))
        vm.count += 1
        return vm.count
    }
    let fail = Command(.ignore) { _ in
        throw DomainError(kind: "business", code: "E1", message: "fuzz", detail: "fuzz")
    }

    static func factory() -> ViewModelFactory {
        ViewModelFactory { args in FuzzCounter(args: args) }
    }

    init(args: Args) {
        count = args.start
    }
}
