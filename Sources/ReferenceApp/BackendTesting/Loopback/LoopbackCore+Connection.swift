import LoopbackTesting
import Backend
import Foundation
import VMHost

extension LoopbackCore {
    /// The largest request head or body the server reads; tests send far less.
    static let maxRequestBytes = 1 << 20

    /// Serves one connection: reads one request, records it, answers (or not), closes.
    func serve(_ fd: Int32) {
        defer {
            state.withLock { _ = $0.connections.remove(fd) }
            Socket.closeSocket(fd)
        }
        guard let (head, body) = readRequest(fd) else { return }
        let recorded = RecordedRequest(method: head.method, path: head.path, query: head.query, headers: head.headers, body: body)
        var fault: LoopbackFault?
        update { state in
            state.requests.append(recorded)
            fault = state.faults[head.path]
        }

        switch fault {
        case nil:
            respond(fd, demoResponse(for: recorded))
        case .status(let status)?:
            respond(fd, .status(status, "scripted HTTP \(status)"))
        case .business(let code, let message)?:
            respond(fd, .business(code: code, message: message))
        case .malformed?:
            respond(fd, status: 200, body: Array(#"{"success":true,"data":[{"id":"p0"#.utf8))
        case .neverAnswer?:
            // Wait for the client to give up; an empty read is its close (or reset).
            while !Socket.receive(fd).isEmpty {}
            if !isStopped { update { $0.closedByClient.append(head.path) } }
        case .dropConnection?:
            return
        case .resetConnection?:
            // The deferred close then sends RST.
            Socket.resetOnClose(fd)
        case .truncatedBody?:
            // Half of a success envelope: the client must notice the short body, not parse it.
            let body = DemoResponse.ok(["token": "demo-token-1"]).body.serialized()
            respond(fd, status: 200, body: Array(body.prefix(body.count / 2)), declaredLength: body.count)
        case .raw(let status, let body)?:
            respond(fd, status: status, body: body)
        case .redirect(let status, let location)?:
            let body = DemoResponse.status(status, "moved").body.serialized()
            respond(fd, status: status, body: body, extraHeaders: "Location: \(location)\r\n")
        case .endlessBody?:
            let responseHead = "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n"
            guard Socket.writeAll(fd, Array(responseHead.utf8) + Array(#"{"success":true,"data":["#.utf8)) else { return }
            let chunk = [UInt8](repeating: UInt8(ascii: " "), count: 65_536)
            // A write fails once the client has closed (EPIPE or ECONNRESET).
            while !isStopped, Socket.writeAll(fd, chunk) {}
            if !isStopped { update { $0.closedByClient.append(head.path) } }
        }
    }

    private func readRequest(_ fd: Int32) -> (HTTPRequestHead, [UInt8])? {
        var buffer: [UInt8] = []
        var headEnd: Int?
        while headEnd == nil {
            let chunk = Socket.receive(fd)
            if chunk.isEmpty || buffer.count > Self.maxRequestBytes { return nil }
            buffer += chunk
            headEnd = HTTPRequestHead.end(in: buffer)
        }
        guard let headEnd, let head = HTTPRequestHead(buffer[..<headEnd]) else { return nil }
        let length = head.contentLength
        guard length <= Self.maxRequestBytes else { return nil }
        if head.headers["expect"]?.lowercased() == "100-continue", buffer.count - headEnd < length {
            Socket.writeAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
        while buffer.count - headEnd < length {
            let chunk = Socket.receive(fd)
            if chunk.isEmpty { return nil }
            buffer += chunk
        }
        return (head, Array(buffer[headEnd..<(headEnd + length)]))
    }

    private func demoResponse(for request: RecordedRequest) -> DemoResponse {
        var json: JSON?
        if !request.body.isEmpty {
            guard let parsed = try? JSON.parse(request.body) else { return .status(400, "请求体不是合法的JSON") }
            json = parsed
        }
        let demoRequest = DemoRequest(method: request.method, path: request.path, query: request.query, body: json)
        return state.withLock { $0.demo.handle(demoRequest) }
    }

    /// Writes an envelope response in the server's convention.
    private func respond(_ fd: Int32, _ response: DemoResponse) {
        var body = response.body
        if convention != .successFlag, let envelope = try? Envelope(json: body) { body = envelope.json(in: convention) }
        respond(fd, status: response.status, body: body.serialized())
    }

    /// Writes a response; `declaredLength` (default: the body's) is the `Content-Length` sent.
    private func respond(_ fd: Int32, status: Int, body: [UInt8], declaredLength: Int? = nil, extraHeaders: String = "") {
        let head =
            "HTTP/1.1 \(status) \(Self.reason(status))\r\n" + "Content-Type: application/json; charset=utf-8\r\n"
            + "Content-Length: \(declaredLength ?? body.count)\r\n" + extraHeaders + "Connection: close\r\n\r\n"
        Socket.writeAll(fd, Array(head.utf8) + body)
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }
}
