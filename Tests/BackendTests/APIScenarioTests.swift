import Backend
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import Testing
@_spi(Transport) import VMHostWire

/// The contract as a client sees it, run against both implementations: the embedded backend and the
/// HTTP client talking to the loopback server. Both serve the same demo data, so the answers match.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct APIScenarioTests {
    @Test(arguments: Implementation.allCases)
    func productsComeInPagesOfTwentyTwentySeventeen(implementation: Implementation) async throws {
        let fixture = try Fixture(implementation)
        defer { fixture.finish() }
        let api = fixture.client
        var sizes: [Int] = []
        var hasMore: [Bool] = []
        for page in 1...3 {
            let result = try await api.products(page: page, pageSize: 20)
            #expect(result.info == PageInfo(index: page, size: 20, total: 57))
            sizes.append(result.items.count)
            hasMore.append(result.hasMore)
        }
        #expect(sizes == [20, 20, 17])
        #expect(hasMore == [true, true, false])
        let first = try await api.products(page: 1, pageSize: 20).items.first
        #expect(first == DemoCatalog.products.first)
    }

    @Test(arguments: Implementation.allCases)
    func aPagePastTheEndIsEmptyWithItsInfo(implementation: Implementation) async throws {
        let fixture = try Fixture(implementation)
        defer { fixture.finish() }
        let api = fixture.client
        let page = try await api.products(page: 4, pageSize: 20)
        #expect(page.items.isEmpty)
        #expect(page.info == PageInfo(index: 4, size: 20, total: 57))
        #expect(!page.hasMore)
    }

    @Test(arguments: Implementation.allCases)
    func anyPageSizeFromOneToAHundredWorks(implementation: Implementation) async throws {
        let fixture = try Fixture(implementation)
        defer { fixture.finish() }
        let api = fixture.client
        var ids: [String] = []
        for page in 1...9 { ids += try await api.products(page: page, pageSize: 7).items.map(\.id) }
        #expect(ids == DemoCatalog.products.map(\.id))
        #expect(try await api.products(page: 1, pageSize: 100).items.count == 57)
        #expect(try await api.products(page: 57, pageSize: 1).items.map(\.id) == ["p057"])
        let error = await backendError { _ = try await api.products(page: 1, pageSize: 101) }
        #expect(error == .server(status: 400))
    }

    @Test(arguments: Implementation.allCases)
    func loginWithTheDemoAccount(implementation: Implementation) async throws {
        let fixture = try Fixture(implementation)
        defer { fixture.finish() }
        let api = fixture.client
        let wrong = await backendError { _ = try await api.login(username: "13800138000", password: "654321") }
        #expect(wrong == .business(code: "1001", message: "用户名或密码错误"))
        #expect(try await api.login(username: "13800138000", password: "123456") == Session(token: "demo-token-1"))
        #expect(try await api.login(username: "13800138000", password: "123456") == Session(token: "demo-token-2"))
    }

    @Test(arguments: Implementation.allCases)
    func smsCodeAndLoginWithCode(implementation: Implementation) async throws {
        let fixture = try Fixture(implementation)
        defer { fixture.finish() }
        let api = fixture.client
        try await api.sendSMSCode(phone: "13912345678")
        let badPhone = await backendError { try await api.sendSMSCode(phone: "12345") }
        #expect(badPhone == .business(code: "1002", message: "手机号格式不正确"))
        let badCode = await backendError { _ = try await api.loginWithCode(phone: "13912345678", code: "000000") }
        #expect(badCode == .business(code: "1003", message: "验证码错误"))
        #expect(try await api.loginWithCode(phone: "13912345678", code: "123456").token == "demo-token-1")
    }

    @Test(arguments: Implementation.allCases)
    func groupsChangeAsARealServersWould(implementation: Implementation) async throws {
        let fixture = try Fixture(implementation)
        defer { fixture.finish() }
        let api = fixture.client
        #expect(try await api.groups(menuUid: "m1") == DemoCatalog.groups)

        let created = try await api.createGroup(menuUid: "m1", name: "  时令新品 ")
        #expect(created == MenuGroup(id: "g5", name: "时令新品", dishCount: 0))
        let renamed = try await api.renameGroup(menuUid: "m1", groupId: "g2", name: "凉菜")
        #expect(renamed == MenuGroup(id: "g2", name: "凉菜", dishCount: 8))
        try await api.deleteGroup(menuUid: "m1", groupId: "g1")

        #expect(try await api.groups(menuUid: "m1").map(\.id) == ["g2", "g3", "g4", "g5"])
        #expect(try await api.groups(menuUid: "m1").first?.name == "凉菜")
        // Ids are never reused.
        #expect(try await api.createGroup(menuUid: "m1", name: "甜品").id == "g6")
    }

    @Test(arguments: Implementation.allCases)
    func unknownMenusAndGroupsAreNotFound(implementation: Implementation) async throws {
        let fixture = try Fixture(implementation)
        defer { fixture.finish() }
        let api = fixture.client
        #expect(await backendError { _ = try await api.groups(menuUid: "m2") } == .server(status: 404))
        #expect(await backendError { _ = try await api.createGroup(menuUid: "m2", name: "x") } == .server(status: 404))
        #expect(await backendError { _ = try await api.renameGroup(menuUid: "m1", groupId: "g9", name: "x") } == .server(status: 404))
        #expect(await backendError { try await api.deleteGroup(menuUid: "m1", groupId: "g9") } == .server(status: 404))
        // An id holding URL syntax stays one path segment.
        #expect(await backendError { try await api.deleteGroup(menuUid: "m1", groupId: "g1/../g2?x=1") } == .server(status: 404))
        #expect(try await api.groups(menuUid: "m1").count == 4)
    }

    @Test(arguments: Implementation.allCases)
    func groupNamesMustBeOneToTwentyCharacters(implementation: Implementation) async throws {
        let fixture = try Fixture(implementation)
        defer { fixture.finish() }
        let api = fixture.client
        let empty = await backendError { _ = try await api.createGroup(menuUid: "m1", name: "   ") }
        #expect(empty == .business(code: "2001", message: "分组名称须为1到20个字符"))
        let long = await backendError { _ = try await api.renameGroup(menuUid: "m1", groupId: "g1", name: String(repeating: "菜", count: 21)) }
        #expect(long?.code == "2001")
        #expect(try await api.renameGroup(menuUid: "m1", groupId: "g1", name: String(repeating: "菜", count: 20)).name.count == 20)
    }

    @Test(arguments: Implementation.allCases)
    func aDeadlineOnTheHostClockTimesACallOut(implementation: Implementation) async throws {
        let fixture = try Fixture(implementation, timeout: .milliseconds(2000))
        defer { fixture.finish() }
        if let embedded = fixture.client as? EmbeddedBackend {
            try embedded.script(endpoint: "groups.list", outcomes: ["timeout"])
        }
        fixture.server?.setFault(.neverAnswer, forPath: "/menus/m1/groups")
        var error: BackendError?
        let api = fixture.client
        let task = EventLoop.startTask { error = await backendError { _ = try await api.groups(menuUid: "m1") } }
        if let server = fixture.server { _ = try await server.request(path: "/menus/m1/groups") }
        await fixture.clock.advance(by: .milliseconds(1999))
        #expect(error == nil)
        await fixture.clock.advance(by: .milliseconds(1))
        await task.value
        #expect(error?.kind == .timeout)
    }
}
