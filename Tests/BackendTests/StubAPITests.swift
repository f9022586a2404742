import Backend
@_spi(Transport) import VMHostEventLoop
import BackendTesting
import VMHostRuntime
import Testing
@_spi(Transport) import VMHostWire

@Suite(.timeLimit(.minutes(1)))
@HostActor
struct StubAPITests {
    let api = StubAPI()

    @Test func callsStayPendingUntilAnswered() async throws {
        var page: Page<Product>?
        let task = EventLoop.startTask { page = try await api.products(page: 1, pageSize: 20) }
        let call = await api.call(.products)
        #expect(call.arguments == ["page": 1, "pageSize": 20])
        #expect(call.isPending)
        #expect(page == nil)
        call.succeed(.demoProducts(page: 1))
        try await task.value
        #expect(page?.items.count == 20)
        #expect(!call.isPending)
        #expect(!call.succeed(.done))
    }

    @Test func callsFailWithTheGivenError() async throws {
        let task = EventLoop.startTask { try await api.groups(menuUid: "m1") }
        await api.call(.groupsList).fail(.server(status: 500))
        await #expect(throws: BackendError.server(status: 500)) { try await task.value }
    }

    @Test func cancellationIsObserved() async throws {
        let task = EventLoop.startTask { try await api.deleteGroup(menuUid: "m1", groupId: "g1") }
        let call = await api.call(.groupsDelete)
        task.cancel()
        #expect(isCancellation(await task.result))
        #expect(call.wasCancelled)
        #expect(api.pendingCalls.isEmpty)
    }

    @Test func queuedAnswersAreTakenInOrderAndLoginKeepsTheToken() async throws {
        api.answerNext(.authLogin, with: .failure(.business(code: "1001", message: "用户名或密码错误")))
        api.answerNext(.authLogin, with: .success(.session(Session(token: "t1"))))
        #expect(await backendError { _ = try await api.login(username: "u", password: "p") }?.kind == .business)
        #expect(try await api.login(username: "u", password: "p").token == "t1")
        #expect(api.token == "t1")
        #expect(api.calls(to: .authLogin).count == 2)
    }

    @Test func theWrongReplyIsADecodeError() async throws {
        api.answerNext(.groupsCreate, with: .success(.done))
        #expect(await backendError { _ = try await api.createGroup(menuUid: "m1", name: "x") }?.kind == .decode)
    }
}
