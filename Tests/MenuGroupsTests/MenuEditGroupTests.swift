import Backend
import BackendTesting
import VMHostEventLoop
import MenuGroups
import VMHostRuntime
import VMHostTesting
import Testing
import VMHostWire

/// `MenuEditGroup` on its own: title, name rule, save, cancel, args.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct MenuEditGroupTests {
    let recorder = ViewModelRecorder(kind: "MenuEditGroup")
    let api = StubAPI()
    let keeper = Keeper()
    static let renaming = MenuEditGroupViewModel.Args(menuUid: "m1", parent: "groups1", groupId: "g2", name: "爽口凉菜")

    private func editor(_ args: MenuEditGroupViewModel.Args = .init(menuUid: "m1"), _ recorder: ViewModelRecorder? = nil)
        -> MenuEditGroupViewModel
    {
        keeper.keep((recorder ?? self.recorder).keep(MenuEditGroupViewModel(args: args, context: (recorder ?? self.recorder).context, api: api)))
    }

    @Test func initialOutputs() {
        let create = editor()
        #expect(create.title.value == "新建分组")
        #expect(create.name.value == "")
        #expect(create.canSave.value == false)
        #expect(create.isSaving.value == false)
        let rename = editor(Self.renaming, ViewModelRecorder())
        #expect(rename.title.value == "重命名分组")
        #expect(rename.name.value == "爽口凉菜")
        #expect(rename.canSave.value == false)
    }

    @Test func englishTitles() {
        #expect(editor(.init(menuUid: "m1"), ViewModelRecorder(locale: .en)).title.value == "New group")
        #expect(editor(Self.renaming, ViewModelRecorder(locale: .en)).title.value == "Rename group")
    }

    @Test func canSaveFollowsTheTrimmedLength() throws {
        _ = editor()
        try recorder.send("name", " ")
        try recorder.send("name", " 特色小炒 ")
        try recorder.send("name", "特色小炒特色小炒特色小炒特色小炒特色小炒")  // 20
        try recorder.send("name", "特色小炒特色小炒特色小炒特色小炒特色小炒汤")  // 21
        try recorder.send("name", "\t特色小炒特色小炒特色小炒特色小炒特色小炒\n")  // 20 once trimmed
        #expect(recorder.take() == [
            .changed("name", " "),
            .changed("name", " 特色小炒 "), .changed("canSave", true),
            .changed("name", "特色小炒特色小炒特色小炒特色小炒特色小炒"),
            .changed("name", "特色小炒特色小炒特色小炒特色小炒特色小炒汤"), .changed("canSave", false),
            .changed("name", "\t特色小炒特色小炒特色小炒特色小炒特色小炒\n"), .changed("canSave", true),
        ])
    }

    @Test func renamingNeedsADifferentName() throws {
        _ = editor(Self.renaming)
        try recorder.send("name", " 爽口凉菜 ")
        try recorder.send("name", "凉菜")
        try recorder.send("name", "爽口凉菜")
        #expect(recorder.take() == [
            .changed("name", " 爽口凉菜 "),
            .changed("name", "凉菜"), .changed("canSave", true),
            .changed("name", "爽口凉菜"), .changed("canSave", false),
        ])
    }

    @Test func saveIsDisabledWithAReasonWhileTheNameCannotBeSaved() throws {
        _ = editor()
        #expect(throws: InputError.disabled(reason: "the name is empty")) { try recorder.execute("save") }
        try recorder.send("name", .string(String(repeating: "菜", count: 21)))
        #expect(throws: InputError.disabled(reason: "the name is longer than 20 characters")) { try recorder.execute("save") }
        let renaming = ViewModelRecorder()
        _ = editor(Self.renaming, renaming)
        #expect(throws: InputError.disabled(reason: "the name is unchanged")) { try renaming.execute("save") }
        #expect(api.calls.isEmpty)
    }

    @Test func saveCreatesWithTheTrimmedNameThenHandsTheGroupBackAndDismisses() async throws {
        _ = editor()
        try recorder.send("name", " 特色小炒 ")
        _ = recorder.take()
        try recorder.execute("save")
        let call = await api.call(.groupsCreate)
        #expect(call.arguments == ["menuUid": "m1", "name": "特色小炒"])
        #expect(recorder.take() == [.changed("isSaving", true)])
        #expect(throws: InputError.disabled(reason: "already running")) { try recorder.execute("save") }

        let group = MenuGroup(id: "g5", name: "特色小炒", dishCount: 0)
        call.succeed(.group(group))
        await recorder.finished(0)
        #expect(recorder.take() == [
            .event("saved", ["group": group.json]), .event("dismiss", nil), .changed("isSaving", false),
        ])
        #expect(recorder.outcomes.first == .succeeded(group.json))
    }

    @Test func saveRenamesTheGroup() async throws {
        _ = editor(Self.renaming)
        try recorder.send("name", "凉菜 ")
        _ = recorder.take()
        let group = MenuGroup(id: "g2", name: "凉菜", dishCount: 8)
        api.answerNext(.groupsRename, with: .success(.group(group)))
        try recorder.execute("save")
        await recorder.finished(0)
        #expect(api.calls.map(\.arguments) == [["menuUid": "m1", "groupId": "g2", "name": "凉菜"]])
        #expect(recorder.take() == [
            .changed("isSaving", true), .event("saved", ["group": group.json]), .event("dismiss", nil),
            .changed("isSaving", false),
        ])
    }

    @Test func aFailedSaveReportsOnceAndStaysOpen() async throws {
        _ = editor(Self.renaming)
        try recorder.send("name", "凉菜")
        _ = recorder.take()
        let failure = DomainError.business(code: "2001", message: "分组名称须为1到20个字符")
        api.answerNext(.groupsRename, with: .failure(failure))
        try recorder.execute("save")
        await recorder.finished(0)
        #expect(recorder.take() == [
            .changed("isSaving", true), .changed("isSaving", false), .event("error", Fixtures.error(failure, input: "save")),
        ])
        #expect(recorder.value("name") == "凉菜")
        #expect(recorder.value("canSave") == true)
    }

    @Test func cancelAbandonsASaveInFlightAndDismisses() async throws {
        _ = editor()
        try recorder.send("name", "特色小炒")
        _ = recorder.take()
        try recorder.execute("save")
        let call = await api.call(.groupsCreate)
        try recorder.send("cancel")
        await recorder.settle()
        #expect(call.wasCancelled)
        #expect(recorder.outcomes == [.cancelled])
        #expect(recorder.take() == [.changed("isSaving", true), .changed("isSaving", false), .event("dismiss", nil)])
    }

    @Test func cancelWithoutASaveOnlyDismisses() throws {
        _ = editor()
        try recorder.send("cancel")
        #expect(recorder.take() == [.event("dismiss", nil)])
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
            _ = try factory.make(args: args, context: recorder.context)
            Issue.record("\(String(describing: args)) was accepted")
        } catch {
            #expect(error.description == message)
        }
    }
}
