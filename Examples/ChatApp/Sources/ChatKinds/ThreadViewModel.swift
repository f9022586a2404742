import VMHost

/// The thread screen (`Thread`): its messages come from the server's long-poll, listened to for as
/// long as the view-model lives (the first poll answers with the thread so far; `vm.dispose`
/// aborts the one in flight), and `send` posts the draft, shown once the server stored it.
@HostActor
public final class ThreadViewModel: ViewModel {
    public static let kind = "Thread"

    @Input public var draft = ""
    @Output public private(set) var messages: [Message] = []
    public let send = Command(.ignore, returning: Message.self, disabled: { $0.draft.trimmed.isEmpty ? "nothing to send" : nil }) { vm in
        let sent = try await vm.api.post(vm.draft.trimmed, author: vm.author)
        vm.merge([sent])
        return sent
    }
    /// New messages, as the server pushes them: one long-poll after another, the last id shown as
    /// the cursor. A failure is reported once on `error` and ends it.
    public let incoming = Listening { vm in
        while true {
            let new = try await vm.api.messages(after: vm.messages.last?.id ?? 0, reader: vm.author)
            vm.merge(new)
        }
    }

    private let api: ChatAPI
    private let author: String

    public static func factory(api: ChatAPI, author: String) -> ViewModelFactory {
        ViewModelFactory { _ in ThreadViewModel(api: api, author: author) }
    }

    public init(api: ChatAPI, author: String) {
        self.api = api
        self.author = author
    }

    /// Adds the messages not shown yet, in the server's order (a message sent here comes back
    /// with the next poll's answer too).
    private func merge(_ new: [Message]) {
        let shown = Set(messages.map(\.id))
        let added = new.filter { !shown.contains($0.id) }
        guard !added.isEmpty else { return }
        messages = (messages + added).sorted { $0.id < $1.id }
    }
}
