import Backend
import BackendTesting
import MenuGroups
import Testing
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
@_spi(Transport) import VMHostWire

/// `MenuEditGroup` on its own: title, name rule, save, cancel, args.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct MenuEditGroupTests {
    let api = StubAPI()
    static let renaming = MenuEditGroupViewModel.Args(menuUid: "m1", parent: "groups1", groupId: "g2", name: "爽口凉菜")

    /// An editor with `args`, in `locale` (Chinese unless given).
    private func editor(_ args: MenuEditGroupViewModel.Args = .init(menuUid: "m1"), locale: AppLocale = .zhHans) -> EditGroupTest {
        ViewModelTest(locale: locale) { MenuEditGroupViewModel(args: args, api: api) }
    }

    @Test func initialOutputs() async {
        let create = editor()
        #expect(create.viewModel.title == "新建分组")
        #expect(create.viewModel.name == "")
        #expect(create.viewModel.canSave == false)
        #expect(create.viewModel.isSaving == false)
        let rename = editor(Self.renaming)
        #expect(rename.viewModel.title == "重命名分组")
        #expect(rename.viewModel.name == "爽口凉菜")
        #expect(rename.viewModel.canSave == false)
        await create.finish()
        await rename.finish()
    }

    @Test func englishTitles() async {
        let create = editor(locale: .en)
        let rename = editor(Self.renaming, locale: .en)
        #expect(create.viewModel.title == "New group")
        #expect(rename.viewModel.title == "Rename group")
        await create.finish()
        await rename.finish()
    }

    @Test func canSaveFollowsTheTrimmedLength() async {
        let test = editor()
        #expect(test.send("name", " ") == nil)
        #expect(test.send("name", " 特色小炒 ") == nil)
        #expect(test.send("name", "特色小炒特色小炒特色小炒特色小炒特色小炒") == nil)  // 20
        #expect(test.send("name", "特色小炒特色小炒特色小炒特色小炒特色小炒汤") == nil)  // 21
        #expect(test.send("name", "\t特色小炒特色小炒特色小炒特色小炒特色小炒\n") == nil)  // 20 once trimmed
        test.expect([
            .changed("name", " "),
            .changed("name", " 特色小炒 "), .changed("canSave", true),
            .changed("name", "特色小炒特色小炒特色小炒特色小炒特色小炒"),
            .changed("name", "特色小炒特色小炒特色小炒特色小炒特色小炒汤"), .changed("canSave", false),
            .changed("name", "\t特色小炒特色小炒特色小炒特色小炒特色小炒\n"), .changed("canSave", true),
        ])
        await test.finish()
    }

    @Test func renamingNeedsADifferentName() async {
        let test = editor(Self.renaming)
        #expect(test.send("name", " 爽口凉菜 ") == nil)
        #expect(test.send("name", "凉菜") == nil)
        #expect(test.send("name", "爽口凉菜") == nil)
        test.expect([
            .changed("name", " 爽口凉菜 "),
            .changed("name", "凉菜"), .changed("canSave", true),
            .changed("name", "爽口凉菜"), .changed("canSave", false),
        ])
        await test.finish()
    }

    @Test func saveIsDisabledWithAReasonWhileTheNameCannotBeSaved() async {
        let test = editor()
        #expect(test.execute("save").refusal == .disabled(reason: "the name is empty"))
        #expect(test.send("name", .string(String(repeating: "菜", count: 21))) == nil)
        #expect(test.execute("save").refusal == .disabled(reason: "the name is longer than 20 characters"))
        let renaming = editor(Self.renaming)
        #expect(renaming.execute("save").refusal == .disabled(reason: "the name is unchanged"))
        #expect(api.calls.isEmpty)
        _ = test.take()
        await test.finish()
        await renaming.finish()
    }

    @Test func saveCreatesWithTheTrimmedNameThenHandsTheGroupBackAndDismisses() async {
        let test = editor()
        #expect(test.send("name", " 特色小炒 ") == nil)
        _ = test.take()
        let save = test.execute("save")
        let call = await api.call(.groupsCreate)
        #expect(call.arguments == ["menuUid": "m1", "name": "特色小炒"])
        test.expect([.changed("isSaving", true)])
        #expect(test.execute("save").refusal == .disabled(reason: "already running"))

        let group = MenuGroup(id: "g5", name: "特色小炒", dishCount: 0)
        call.succeed(.group(group))
        #expect(await save.finished() == .succeeded(group.json))
        test.expect([
            .event("saved", ["group": group.json]), .event("dismiss", nil), .changed("isSaving", false),
        ])
        await test.finish(also: [api.verifyNothingPending])
    }

    @Test func saveRenamesTheGroup() async {
        let test = editor(Self.renaming)
        #expect(test.send("name", "凉菜 ") == nil)
        _ = test.take()
        let group = MenuGroup(id: "g2", name: "凉菜", dishCount: 8)
        api.answerNext(.groupsRename, with: .success(.group(group)))
        #expect(await test.execute("save").finished() == .succeeded(group.json))
        #expect(api.calls.map(\.arguments) == [["menuUid": "m1", "groupId": "g2", "name": "凉菜"]])
        test.expect([
            .changed("isSaving", true), .event("saved", ["group": group.json]), .event("dismiss", nil),
            .changed("isSaving", false),
        ])
        await test.finish(also: [api.verifyNothingPending])
    }

    @Test func aFailedSaveReportsOnceAndStaysOpen() async {
        let test = editor(Self.renaming)
        #expect(test.send("name", "凉菜") == nil)
        _ = test.take()
        let failure = BackendError.business(code: "2001", message: "分组名称须为1到20个字符")
        api.answerNext(.groupsRename, with: .failure(failure))
        #expect(await test.execute("save").finished() == .failed(Fixtures.failure(failure, input: "save")))
        test.expect([
            .changed("isSaving", true), .changed("isSaving", false), .event("error", Fixtures.error(failure, input: "save")),
        ])
        #expect(test.value("name") == "凉菜")
        #expect(test.value("canSave") == true)
        await test.finish(also: [api.verifyNothingPending])
    }

    @Test func cancelAbandonsASaveInFlightAndDismisses() async {
        let test = editor()
        #expect(test.send("name", "特色小炒") == nil)
        _ = test.take()
        let save = test.execute("save")
        let call = await api.call(.groupsCreate)
        #expect(test.send("cancel") == nil)
        #expect(await save.finished() == .cancelled)
        #expect(call.wasCancelled)
        test.expect([.changed("isSaving", true), .changed("isSaving", false), .event("dismiss", nil)])
        await test.finish(also: [api.verifyNothingPending])
    }

    @Test func cancelWithoutASaveOnlyDismisses() async {
        let test = editor()
        #expect(test.send("cancel") == nil)
        test.expect([.event("dismiss", nil)])
        await test.finish()
    }

    @Test(arguments: [
        (nil, "params.args.menuUid: is required (a string)"),
        (["menuUid": "m1", "groupId": ""], "params.args.groupId: must not be empty"),
        (["menuUid": "m1", "parent": ""], "params.args.parent: must not be empty"),
        (["menuUid": "m1", "name": 3], "params.args.name: expected a string, got a number"),
        (["menuUid": "m1", "id": "g1"], "params.args.id: is not a known member (expected one of: groupId, menuUid, name, parent)"),
    ] as [(JSON?, String)])
    func argsAreValidatedByName(args: JSON?, message: String) {
        let factory = MenuEditGroupViewModel.factory(api: api)
        do {
            _ = try factory.make(args: args, context: Fixtures.context(kind: MenuEditGroupViewModel.kind))
            Issue.record("\(String(describing: args)) was accepted")
        } catch {
            #expect(error.description == message)
        }
    }
}
