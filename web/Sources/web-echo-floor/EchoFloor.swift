#if canImport(Glibc)
import Glibc
#endif
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import NIOPosix
import NIOWebSocket

/// The floor of bench/web_cost.mjs: the least a hummingbird-websocket server does per message,
/// built on the hummingbird, hummingbird-websocket and SwiftNIO versions vmhost-web is built on,
/// with the same release flags (`scripts/build-release.sh web-echo-floor`).
///
/// `web-echo-floor [PORT]` listens on 127.0.0.1:PORT (0: any free port) and prints the port on
/// stdout. A WebSocket handshake at `/rpc` opens a session whose handler reads each frame and, for
/// a text frame, writes its bytes back as one text frame (one write and one flush on the
/// connection's event loop, as vmhost-web writes a reply). Its WebSocket settings are vmhost-web's:
/// frames up to 4 MiB, a ping every 30 s, close reasons checked as UTF-8; its event loop threads
/// are as many as the cores it may run on, as a single vmhost-web worker's are. No JSON is parsed:
/// what vmhost-web does beyond this is its cost.
@main
enum EchoFloor {
    static func main() async throws {
        let port = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 0 : 0
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("/rpc") { inbound, outbound, _ in
            for try await frame in inbound where frame.opcode == .text {
                try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: frame.data)))
            }
        }
        var webSocket = WebSocketServerConfiguration(maxFrameSize: 4 * 1024 * 1024)
        webSocket.autoPing = .enabled(timePeriod: .seconds(30))
        webSocket.validateUTF8 = true
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: .init(http1: .init(), ws: webSocket)),
            configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                let line = "\(channel.localAddress?.port ?? 0)\n"
                _ = line.withCString { write(1, $0, strlen($0)) }
            },
            eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)))
        try await app.runService()
    }
}
