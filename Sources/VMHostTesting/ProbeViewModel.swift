import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// A test-only kind that exercises every runtime primitive; used by the host and runtime tests.
///
/// Outputs: `count`, `text` (a field), `items` (a list, for diffs), `busy` (`work` running),
/// `loading` (any run of the view-model), events `pinged`, `error`.
/// Inputs: `text` (value), `increment` / `bump {by}` / `emit` / `append {items}` / `reset` (triggers),
/// `work {ms?}` (latest), `once` (ignore), `fail {kind, ms?}` (ignore), `perKey {key}`
/// (ignorePerKey), `parallel {ms}` (concurrent), `guarded` (disabled while count < 0).
@HostActor
public final class ProbeViewModel: ViewModel {
    public static let kind = "Probe"

    public struct Args: ViewModelArgs {
        public var start: Int
        public init(start: Int = 0) { self.start = start }
        public init(reader: ObjectReader) throws(JSONDecodingError) {
            start = try reader.optional("start", default: 0)
        }
    }

    @Output public var count = 0
    @Field public var text = ""
    @Output public var items: [String] = []
    @Derived({ $0.work.isRunning }) public var busy: Bool
    @Derived({ $0.context.isBusy }) public var loading: Bool
    public let pinged = Event<Int>()

    public let increment = Trigger { vm in vm.count += 1 }
    public let bump = Trigger(of: JSONObject.self) { vm, value throws(InputError) in
        guard let by = value["by"]?.intValue else {
            throw .invalidValue(JSONDecodingError(path: "params.value.by", problem: "is required (an integer)"))
        }
        vm.count += Int(by)
    }
    public let emit = Trigger { vm in
        vm.count += 1
        vm.pinged.emit(vm.count)
        vm.count += 1
    }
    public let append = Trigger(of: [String].self) { vm, items in vm.items += items }
    public let reset = Trigger { vm in
        vm.count = 0
        vm.items = []
    }
    public let work = Command(.latest, of: JSON.self, returning: Int.self) { vm, value in
        try await vm.context.clock.sleep(for: .milliseconds(value["ms"]?.intValue ?? 100))
        vm.count += 1
        return vm.count
    }
    public let once = Command(.ignore, returning: String.self) { vm in
        try await vm.context.clock.sleep(for: .milliseconds(100))
        return "done"
    }
    public let fail = Command(.ignore, of: JSON.self) { vm, value in
        let ms = value["ms"]?.intValue ?? 0
        if ms > 0 { try await vm.context.clock.sleep(for: .milliseconds(ms)) }
        let kind = value["kind"]?.stringValue ?? "business"
        throw DomainError(
            kind: kind, code: kind == "server" ? 500 : kind == "business" ? "E42" : .null, message: "probe failed (\(kind))",
            detail: "probe failure")
    }
    public let perKey = Command(.ignorePerKey { $0["key"]?.stringValue ?? "" }, of: JSON.self, returning: JSON.self) { vm, value in
        try await vm.context.clock.sleep(for: .milliseconds(100))
        return value["key"] ?? .null
    }
    public let parallel = Command(.concurrent, of: JSON.self, returning: Int64.self) { vm, value in
        let ms = value["ms"]?.intValue ?? 100
        try await vm.context.clock.sleep(for: .milliseconds(ms))
        return ms
    }
    public let guarded = Command(.ignore, disabled: { $0.count < 0 ? "count is negative" : nil }) { _ in }

    public static func factory() -> ViewModelFactory {
        ViewModelFactory { args in ProbeViewModel(args: args) }
    }

    public init(args: Args) {
        count = args.start
    }
}
