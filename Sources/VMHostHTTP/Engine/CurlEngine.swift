import CVMHostCurl
import Synchronization
import VMHostEventLoop

/// The process's one HTTP client: libcurl's multi interface driven by one thread, made by the first
/// call (a `static let` is initialised on first use) and never stopped, so that a host which never
/// calls an HTTP backend loads no library, starts no thread and opens nothing.
///
/// The thread loads libcurl (``CurlLibrary``), so the host thread never waits for it; when it
/// cannot, every call fails as ``HTTPError/Kind/unavailable`` saying libcurl is missing. It then runs the transfers
/// handed to it: it adds them to one multi handle, whose connection cache keeps connections alive
/// between calls, lets libcurl do the I/O, and sleeps in `curl_multi_poll` until a socket is ready
/// or the host thread wakes it (`curl_multi_wakeup`) with a new transfer or an abort. A finished
/// transfer's outcome goes back to the waiting task on the host thread (``CurlTransfer``).
///
/// Every transfer is configured the same way: libcurl never follows a redirect (a 3xx comes back as
/// it is, and ``HTTPClient`` decides by its ``HTTPRedirectPolicy``), no proxy from the environment is used, only `http` and `https` are spoken,
/// bodies are not decompressed, and a body over the limit aborts the transfer (its connection is
/// then closed). An aborted transfer is removed from the multi handle, which closes its connection
/// at once: the server sees it.
final class CurlEngine: Sendable {
    static let shared = CurlEngine()

    /// libcurl and the multi handle, once the thread has made them.
    private struct Ready: @unchecked Sendable {
        let library: CurlLibrary
        let multi: UnsafeMutableRawPointer
    }

    private struct Queue {
        var started: [CurlTransfer] = []
        var aborted: [CurlTransfer] = []
        var ready: Ready?
        /// Why libcurl cannot be used; every call then fails with it.
        var failure: HTTPError?
    }

    private let queue = Mutex(Queue())
    /// The names ``CurlLibrary/load(names:)`` tries.
    private let libraryNames: [String]

    /// An engine of its own: the process uses ``shared``; tests make one with a library that is missing.
    init(libraryNames: [String] = CurlLibrary.defaultNames) {
        self.libraryNames = libraryNames
        startThread { [self] in work() }
    }

    /// Sends `transfer`; its outcome comes through ``CurlTransfer/finish(_:abortingOn:)``.
    func start(_ transfer: CurlTransfer) {
        let (ready, failure) = queue.withLock { queue -> (Ready?, HTTPError?) in
            if let failure = queue.failure { return (nil, failure) }
            queue.started.append(transfer)
            return (queue.ready, nil)
        }
        if let failure { transfer.finish(.failure(failure)) }
        if let ready { _ = ready.library.multiWakeup(ready.multi) }
    }

    /// Stops `transfer` if it is running, closing its connection.
    func abort(_ transfer: CurlTransfer) {
        let ready = queue.withLock { queue -> Ready? in
            guard queue.failure == nil else { return nil }
            queue.aborted.append(transfer)
            return queue.ready
        }
        if let ready { _ = ready.library.multiWakeup(ready.multi) }
    }

    // MARK: The thread

    private func work() {
        let ready: Ready
        switch Self.open(libraryNames) {
        case .success(let opened): ready = opened
        case .failure(let failure):
            let waiting = queue.withLock { queue in
                queue.failure = failure
                defer { queue.started = []; queue.aborted = [] }
                return queue.started
            }
            for transfer in waiting { transfer.finish(.failure(failure)) }
            return
        }
        queue.withLock { $0.ready = ready }
        let library = ready.library, multi = ready.multi
        var running: [UnsafeMutableRawPointer: CurlExchange] = [:]
        while true {
            let (started, aborted) = queue.withLock { queue in
                defer { queue.started = []; queue.aborted = [] }
                return (queue.started, queue.aborted)
            }
            for transfer in started where !transfer.isFinished {
                switch CurlExchange.make(transfer, library: library) {
                case .success(let exchange):
                    if library.multiAddHandle(multi, exchange.easy) == 0 {
                        running[exchange.easy] = exchange
                    } else {
                        exchange.close()
                        transfer.finish(.failure(HTTPError(.failed, "the request failed")))
                    }
                case .failure(let error):
                    transfer.finish(.failure(error))
                }
            }
            for transfer in aborted {
                guard let (easy, exchange) = running.first(where: { $0.value.transfer === transfer }) else { continue }
                running[easy] = nil
                _ = library.multiRemoveHandle(multi, easy)
                exchange.close()
            }
            var stillRunning: Int32 = 0
            _ = library.multiPerform(multi, &stillRunning)
            var left: Int32 = 0
            while let message = library.multiInfoRead(multi, &left) {
                guard message.pointee.msg == CurlLibrary.messageDone, let easy = message.pointee.easy_handle,
                      let exchange = running.removeValue(forKey: easy)
                else { continue }
                let outcome = exchange.outcome(code: message.pointee.data.result)
                _ = library.multiRemoveHandle(multi, easy)
                exchange.close()
                exchange.transfer.finish(outcome)
            }
            // Returns early for libcurl's own timers, a ready socket or a wake-up.
            _ = library.multiPoll(multi, nil, 0, 60_000, nil)
        }
    }

    private static func open(_ names: [String]) -> Result<Ready, HTTPError> {
        CurlLibrary.load(names: names).flatMap { library in
            guard library.globalInit(CurlLibrary.globalDefault) == 0, let multi = library.multiInit() else {
                return .failure(HTTPError(.unavailable, "libcurl could not be initialised"))
            }
            return .success(Ready(library: library, multi: multi))
        }
    }
}

/// One transfer on the engine's thread: its easy handle, its header list, and the head and body received.
/// Only the engine's thread touches it.
final class CurlExchange {
    let transfer: CurlTransfer
    let library: CurlLibrary
    let easy: UnsafeMutableRawPointer
    private var headerList: UnsafeMutableRawPointer?
    private var received: [UInt8] = []
    /// The response's header lines (the last response's: an interim `1xx` head is dropped).
    private var headerLines: [String] = []
    private var headerBytes = 0
    private var overLimit = false
    private var headOverLimit = false

    private init(transfer: CurlTransfer, library: CurlLibrary, easy: UnsafeMutableRawPointer) {
        self.transfer = transfer
        self.library = library
        self.easy = easy
    }

    /// An easy handle configured for `transfer`.
    static func make(_ transfer: CurlTransfer, library: CurlLibrary) -> Result<CurlExchange, HTTPError> {
        guard let easy = library.easyInit() else { return .failure(HTTPError(.failed, "the request failed")) }
        let exchange = CurlExchange(transfer: transfer, library: library, easy: easy)
        guard exchange.configure() else {
            exchange.close()
            return .failure(HTTPError(.failed, "the request failed"))
        }
        return .success(exchange)
    }

    private func configure() -> Bool {
        for line in transfer.headers + ["Expect:"] {
            guard let list = line.withCString({ library.slistAppend(headerList, $0) }) else { return false }
            headerList = list
        }
        var ok = library.set(easy, .url, transfer.url)
            && library.set(easy, .noSignal, 1)
            && library.set(easy, .followLocation, 0)
            && library.set(easy, .proxy, "")
            && library.set(easy, .protocols, CurlLibrary.protocolsHTTP)
            && library.set(easy, .timeoutMilliseconds, transfer.backstopMilliseconds)
            && library.set(easy, .httpHeader, pointer: headerList)
            && library.set(easy, .writeFunction, Self.receive)
            && library.set(easy, .writeData, pointer: Unmanaged.passUnretained(self).toOpaque())
            && library.set(easy, .headerFunction, Self.receiveHeader)
            && library.set(easy, .headerData, pointer: Unmanaged.passUnretained(self).toOpaque())
        if transfer.maxResponseBytes > 0 {
            ok = ok && library.set(easy, .maxFileSize, offset: Int64(transfer.maxResponseBytes))
        }
        switch transfer.method {
        case "GET": break
        case "HEAD": ok = ok && library.set(easy, .noBody, 1)
        case "POST": ok = ok && library.set(easy, .post, 1)
        default: ok = ok && library.set(easy, .customRequest, transfer.method)
        }
        if let body = transfer.body {
            // libcurl copies the body (COPYPOSTFIELDS), so it need not outlive this call.
            ok = ok && library.set(easy, .postFieldSize, body.count)
                && body.withUnsafeBytes { library.set(easy, .copyPostFields, pointer: $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)) }
        }
        return ok
    }

    /// libcurl's write callback: keeps the body's bytes, and aborts the transfer (by taking none)
    /// when they would pass the limit.
    private static let receive: vmhost_curl_write_callback = { bytes, size, count, context in
        guard let context else { return 0 }
        let exchange = Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue()
        let (total, overflow) = size.multipliedReportingOverflow(by: count)
        guard !overflow, total <= exchange.transfer.maxResponseBytes - exchange.received.count else {
            exchange.overLimit = true
            return 0
        }
        if total > 0, let bytes { exchange.received.append(contentsOf: UnsafeRawBufferPointer(start: bytes, count: total)) }
        return total
    }

    /// libcurl's header callback: keeps each header line of the response (a new status line starts
    /// the head anew), and aborts the transfer when the head passes its own limit
    /// (``CurlTransfer/maxHeadBytes``; the body's limit counts the body only).
    private static let receiveHeader: vmhost_curl_write_callback = { bytes, size, count, context in
        guard let context else { return 0 }
        let exchange = Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue()
        let (total, overflow) = size.multipliedReportingOverflow(by: count)
        guard !overflow, total <= CurlTransfer.maxHeadBytes - exchange.headerBytes else {
            exchange.headOverLimit = true
            return 0
        }
        exchange.headerBytes += total
        guard total > 0, let bytes else { return total }
        var raw = UnsafeRawBufferPointer(start: bytes, count: total)[...]
        while let last = raw.last, last == 0x0A || last == 0x0D { raw = raw.dropLast() }
        let line = String(decoding: raw, as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            exchange.headerLines = []
        } else if !line.isEmpty {
            exchange.headerLines.append(line)
        }
        return total
    }

    /// The outcome of the finished transfer, whose `CURLcode` is `code`.
    func outcome(code: Int32) -> CurlTransfer.Outcome {
        if code == 0 {
            var headers = HTTPHeaders()
            for line in headerLines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers.add(String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }))
            }
            return .success(HTTPResponse(status: library.responseCode(easy), headers: headers, body: received))
        }
        if overLimit { return .failure(HTTPError.tooLarge(limit: transfer.maxResponseBytes)) }
        if headOverLimit {
            return .failure(HTTPError(.responseTooLarge, "the response head is larger than the limit of \(CurlTransfer.maxHeadBytes) bytes"))
        }
        return .failure(HTTPError(curlCode: code, maxResponseBytes: transfer.maxResponseBytes))
    }

    /// Frees the easy handle and the header list; the handle must no longer be in the multi handle.
    func close() {
        library.easyCleanup(easy)
        if let headerList { library.slistFreeAll(headerList) }
        headerList = nil
    }
}
