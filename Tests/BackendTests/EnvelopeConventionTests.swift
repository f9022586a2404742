import Backend
import BackendTesting
import HTTPBackend
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// The HTTP client against a loopback server that writes its envelopes `{code, msg, data, page}`
/// without `success` (seed 004's server): every endpoint succeeds, and fails with the server's code
/// and message.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct EnvelopeConventionTests {
    let server: LoopbackServer
    let client: HTTPAPIClient

    init() throws {
        server = try LoopbackServer(convention: .codeAndMsg)
        client = HTTPAPIClient(baseURL: server.baseURL, clock: ManualClock())
    }

    @Test func theServerReallyWritesCodeAndMsg() async throws {
        _ = try await client.groups(menuUid: "m1")
        let (data, _) = try await URLSession.shared.data(from: URL(string: "\(server.baseURL)/menus/m1/groups")!)
        let json = try JSON.parse(Array(data))
        #expect(json["success"] == Optional<JSON>.none)
        #expect(json["code"] == "0")
        #expect(json["msg"] == "ok")
    }

    @Test func everyEndpointSucceeds() async throws {
        let page = try await client.products(page: 3, pageSize: 20)
        #expect(page.items.map(\.id).first == "p041")
        #expect(page.info == PageInfo(index: 3, size: 20, total: 57))
        #expect(try await client.login(username: "13800138000", password: "123456").token == "demo-token-1")
        try await client.sendSMSCode(phone: "13912345678")
        #expect(try await client.loginWithCode(phone: "13912345678", code: "123456").token == "demo-token-2")
        #expect(try await client.groups(menuUid: "m1").map(\.id) == ["g1", "g2", "g3", "g4"])
        #expect(try await client.createGroup(menuUid: "m1", name: "新品").name == "新品")
        #expect(try await client.renameGroup(menuUid: "m1", groupId: "g1", name: "热菜").name == "热菜")
        try await client.deleteGroup(menuUid: "m1", groupId: "g1")
        #expect(server.requests.count == 8)
    }

    /// The demo server's own business failures, written `{"code": "1001", "msg": …}`.
    @Test func businessFailuresKeepTheServersCodeAndMessage() async throws {
        let login = await backendError { _ = try await client.login(username: "13800138000", password: "000000") }
        #expect(login == .business(code: "1001", message: "用户名或密码错误"))
        #expect(login?.message(in: .zhHans) == "用户名或密码错误")
        let send = await backendError { try await client.sendSMSCode(phone: "123") }
        #expect(send == .business(code: "1002", message: "手机号格式不正确"))
        let code = await backendError { _ = try await client.loginWithCode(phone: "13912345678", code: "000000") }
        #expect(code == .business(code: "1003", message: "验证码错误"))
        let create = await backendError { _ = try await client.createGroup(menuUid: "m1", name: "") }
        #expect(create?.kind == .business)
        #expect(create?.code == "2001")
    }

    /// Every endpoint, made to fail with `{"code": "1", "msg": "失败"}` (the seed's failure).
    @Test(arguments: [
        "/products", "/auth/login", "/auth/sms-code", "/auth/login-code", "/menus/m1/groups", "/menus/m1/groups/g1",
    ])
    func aScriptedFailureOnEveryPath(path: String) async throws {
        server.setFault(.business(code: "1", message: "失败"), forPath: path)
        let calls: [@HostActor () async throws -> Void] = switch path {
        case "/products": [{ _ = try await client.products(page: 1, pageSize: 20) }]
        case "/auth/login": [{ _ = try await client.login(username: "13800138000", password: "123456") }]
        case "/auth/sms-code": [{ try await client.sendSMSCode(phone: "13912345678") }]
        case "/auth/login-code": [{ _ = try await client.loginWithCode(phone: "13912345678", code: "123456") }]
        case "/menus/m1/groups": [{ _ = try await client.groups(menuUid: "m1") }, { _ = try await client.createGroup(menuUid: "m1", name: "a") }]
        default: [{ _ = try await client.renameGroup(menuUid: "m1", groupId: "g1", name: "a") }, { try await client.deleteGroup(menuUid: "m1", groupId: "g1") }]
        }
        for call in calls {
            #expect(await backendError(call) == .business(code: "1", message: "失败"))
        }
        #expect(client.token == nil)
    }
}
