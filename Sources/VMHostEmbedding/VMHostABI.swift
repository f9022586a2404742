@_exported import CVMHost
import Logging
import Synchronization
import VMHost
@_spi(Transport) import VMHostEventLoop

/// The C ABI of `include/vmhost.h` (target CVMHost) over ``EmbeddedHost``: handles, return codes,
/// C callbacks. `vmhost_write` and `vmhost_close` are defined here; `vmhost_open` is the app's
/// library's, one line that names its server:
///
/// ```swift
/// import VMHostEmbedding
/// import TodoKinds
///
/// @_cdecl("vmhost_open")
/// public func vmhostOpen(
///     _ argc: Int32, _ argv: UnsafePointer<UnsafePointer<CChar>?>?, _ onMessage: vmhost_message_fn?,
///     _ onLog: vmhost_log_fn?, _ context: UnsafeMutableRawPointer?, _ hostOut: UnsafeMutablePointer<vmhost_handle>?
/// ) -> Int32 {
///     VMHostABI.open(TodoServer.server, argc, argv, onMessage, onLog, context, hostOut)
/// }
/// ```
///
/// The header's statements (threads, buffers, return codes, the end of a host) are what this
/// implements; protocol/embedding.md explains them.
public enum VMHostABI {
    /// `vmhost_open` for `server`: see the header.
    public static func open(
        _ server: Server, _ argc: Int32, _ argv: UnsafePointer<UnsafePointer<CChar>?>?,
        _ onMessage: vmhost_message_fn?, _ onLog: vmhost_log_fn?, _ context: UnsafeMutableRawPointer?,
        _ hostOut: UnsafeMutablePointer<vmhost_handle>?
    ) -> Int32 {
        guard let onMessage, let hostOut, argc >= 0, argc == 0 || argv != nil else { return Int32(VMHOST_ERR_ARGUMENT) }
        // The Swift runtime's crash handlers, installed when the library was loaded, are the
        // process's to set (vmhost.h): given back, in case the runtime's initialisers ran after the
        // library's (a runtime linked statically).
        _ = vmhost_release_runtime_crash_handlers()
        var arguments: [String] = []
        arguments.reserveCapacity(Int(argc))
        for index in 0..<Int(argc) {
            guard let argument = argv?[index] else { return Int32(VMHOST_ERR_ARGUMENT) }
            arguments.append(String(cString: argument))
        }
        let callbacks = Callbacks(onMessage: onMessage, onLog: onLog, context: context)
        let id = HostTable.shared.reserve()
        let logger = onLog.map { _ in
            Logger(label: server.configuration.name) { label in CallbackLogHandler(label: label, callbacks: callbacks) }
        }
        let delivery = EmbeddedSession.Delivery.callback(
            { body in callbacks.message(body) },
            onEnd: { _ in
                // Ended before the last call, so that a close from inside it frees the host at once.
                HostTable.shared.ended(id)
                callbacks.end()
            })
        do throws(EmbeddedHost.OpenError) {
            let host = try EmbeddedHost(server: server, arguments: arguments, logger: logger, delivery: delivery)
            HostTable.shared.fill(id, with: host)
            hostOut.pointee = id
            return Int32(VMHOST_OK)
        } catch {
            HostTable.shared.forget(id)
            // Said where the host would have said it: on the host thread, through on_log.
            if onLog != nil {
                let line = error.kind == .usage
                    ? "\(server.configuration.name): usage error: \(error.message)"
                    : "\(server.configuration.name): \(error.message)"
                EventLoop.shared.runAndWait { callbacks.log(level: Int32(VMHOST_LOG_ERROR), line) }
            }
            return error.kind == .usage ? Int32(VMHOST_ERR_USAGE) : Int32(VMHOST_ERR_TRACE)
        }
    }
}

/// `vmhost_write`: see the header.
@_cdecl("vmhost_write")
public func vmhostWrite(_ handle: vmhost_handle, _ bytes: UnsafeRawPointer?, _ length: Int) -> Int32 {
    guard length > 0, let bytes else { return Int32(VMHOST_ERR_ARGUMENT) }
    guard let host = HostTable.shared.host(handle) else { return Int32(VMHOST_ERR_HANDLE) }
    switch host.write(UnsafeRawBufferPointer(start: bytes, count: length)) {
    case .accepted: return Int32(VMHOST_OK)
    case .closed: return Int32(VMHOST_ERR_CLOSED)
    case .full: return Int32(VMHOST_ERR_FULL)
    }
}

/// `vmhost_close`: see the header.
@_cdecl("vmhost_close")
public func vmhostClose(_ handle: vmhost_handle, _ status: UnsafeMutablePointer<Int32>?) -> Int32 {
    switch HostTable.shared.close(handle) {
    case .unknown:
        return Int32(VMHOST_ERR_HANDLE)
    case .underWay:
        return Int32(VMHOST_ERR_CLOSED)
    case .ended(let code):
        status?.pointee = code
        return Int32(VMHOST_OK)
    case .wait(let host):
        if EventLoop.shared.inLoop {
            // Inside a callback: the host ends after it returns, and is freed at its end.
            status?.pointee = -1
            return Int32(VMHOST_OK)
        }
        let code = host.waitForEnd()
        HostTable.shared.forget(handle)
        // The host thread may still be unwinding the turn that ended the host, whose stack holds
        // the last references to its session: one more turn of it, so that the host is freed
        // before this call returns (a process that exits next leaves nothing of it behind).
        EventLoop.shared.runAndWait {}
        status?.pointee = code
        return Int32(VMHOST_OK)
    }
}

/// The C callbacks of one host and the caller's context. Called only on the host thread, and
/// none after the last `on_message` call (`end()`).
final class Callbacks: @unchecked Sendable {
    let onMessage: vmhost_message_fn
    let onLog: vmhost_log_fn?
    let context: UnsafeMutableRawPointer?
    /// Host-thread only: the last call was made.
    private var ended = false

    init(onMessage: @escaping vmhost_message_fn, onLog: vmhost_log_fn?, context: UnsafeMutableRawPointer?) {
        self.onMessage = onMessage
        self.onLog = onLog
        self.context = context
    }

    func message(_ body: [UInt8]) {
        body.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { onMessage(context, $0.baseAddress, $0.count) }
        }
    }

    func end() {
        ended = true
        onMessage(context, nil, 0)
    }

    func log(level: Int32, _ line: String) {
        guard let onLog, !ended else { return }
        var line = line
        line.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { onLog(context, level, $0.baseAddress, $0.count) }
        }
    }
}

/// Log lines of one host to its `on_log`, on the host thread: a line logged on another thread
/// (a backend's) is handed to the host thread, and dropped if the host has ended by then.
struct CallbackLogHandler: LogHandler {
    var logLevel: Logger.Level = .warning
    var metadata: Logger.Metadata = [:]
    let label: String
    let callbacks: Callbacks

    init(label: String, callbacks: Callbacks) {
        self.label = label
        self.callbacks = callbacks
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line = "\(label) \(event.level): \(event.message)"
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        if !merged.isEmpty {
            line += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        let level = Int32(Logger.Level.allCases.firstIndex(of: event.level) ?? 0)
        let callbacks = callbacks
        let text = line
        if EventLoop.shared.inLoop {
            callbacks.log(level: level, text)
        } else {
            EventLoop.shared.execute { callbacks.log(level: level, text) }
        }
    }
}

/// The hosts open in the process, by handle. Handles count up from 1 and are never reused, so a
/// stale one is found in no entry.
final class HostTable: Sendable {
    static let shared = HostTable()

    private struct Entry {
        /// Nil while ``EmbeddedHost`` is being made.
        var host: EmbeddedHost?
        var closeRequested = false
        var ended = false
    }

    private struct State {
        var next: vmhost_handle = 1
        var entries: [vmhost_handle: Entry] = [:]
        /// The host last looked up, with its handle: a caller writes to one host many times in a
        /// row, and this answers it without hashing. Cleared whenever an entry goes.
        var recent: (id: vmhost_handle, host: EmbeddedHost)?

        mutating func remove(_ id: vmhost_handle) -> Entry? {
            recent = nil
            return entries.removeValue(forKey: id)
        }
    }

    private let state = Mutex(State())

    enum Closing {
        case unknown
        case underWay
        case ended(Int32)
        case wait(EmbeddedHost)
    }

    func reserve() -> vmhost_handle {
        state.withLock { state in
            let id = state.next
            state.next += 1
            state.entries[id] = Entry()
            return id
        }
    }

    func fill(_ id: vmhost_handle, with host: EmbeddedHost) {
        state.withLock { $0.entries[id]?.host = host }
    }

    func forget(_ id: vmhost_handle) {
        _ = state.withLock { $0.remove(id) }
    }

    func host(_ id: vmhost_handle) -> EmbeddedHost? {
        state.withLock { state in
            if let recent = state.recent, recent.id == id { return recent.host }
            guard let host = state.entries[id]?.host else { return nil }
            state.recent = (id, host)
            return host
        }
    }

    /// The host ended (its last callback is about to be made): freed now if a close was asked for,
    /// else at the close.
    func ended(_ id: vmhost_handle) {
        let freed = state.withLock { state -> EmbeddedHost? in
            guard var entry = state.entries[id] else { return nil }
            entry.ended = true
            if entry.closeRequested {
                _ = state.remove(id)
                return entry.host
            }
            state.entries[id] = entry
            return nil
        }
        _ = freed  // released outside the lock
    }

    /// A close of `id`: what the caller does next.
    func close(_ id: vmhost_handle) -> Closing {
        let (closing, freed) = state.withLock { state -> (Closing, EmbeddedHost?) in
            guard var entry = state.entries[id], let host = entry.host else { return (.unknown, nil) }
            if entry.closeRequested { return (.underWay, nil) }
            if entry.ended, let status = host.status {
                _ = state.remove(id)
                return (.ended(status), host)
            }
            entry.closeRequested = true
            state.entries[id] = entry
            return (.wait(host), nil)
        }
        _ = freed
        if case .wait(let host) = closing { host.requestClose() }
        return closing
    }
}
