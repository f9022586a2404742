import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// A test-only kind that exercises every runtime primitive; used by the host and runtime tests.
///
/// Outputs: `count`, `text`, `items` (a list, for diffs), `busy` (the `work` command's
/// isExecuting), `loading` (the activity counter); events `pinged`, `error`.
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

    public let context: ViewModelContext
    public let count: Property<Int>
    public let text: Property<String>
    public let items: Property<[String]>
    public let busy: Property<Bool>
    public let loading: Property<Bool>
    public let pinged: Event<Int>

    public static func factory() -> ViewModelFactory {
        ViewModelFactory(ProbeViewModel.self) { args, context in ProbeViewModel(args: args, context: context) }
    }

    public init(args: Args, context: ViewModelContext) {
        self.context = context
        count = context.property("count", args.start)
        text = context.property("text", "")
        items = context.property("items", [String]())
        busy = context.property("busy", false)
        loading = context.property("loading", false)
        pinged = context.event("pinged")

        context.value("text", of: String.self) { [unowned self] in text.value = $0 }
        context.trigger("increment") { [unowned self] in count.value += 1 }
        context.trigger("bump", of: JSONObject.self) { [unowned self] value throws(InputError) in
            guard let by = value["by"]?.intValue else {
                throw .invalidValue(JSONDecodingError(path: "params.value.by", problem: "is required (an integer)"))
            }
            count.value += Int(by)
        }
        context.trigger("emit") { [unowned self] in
            count.value += 1
            pinged.emit(count.value)
            count.value += 1
        }
        context.trigger("append", of: [String].self) { [unowned self] in items.value += $0 }
        context.trigger("reset") { [unowned self] in
            count.value = 0
            items.value = []
        }
        let work = context.command("work", of: JSON.self, policy: .latest) { [unowned self] value in
            let ms = value["ms"]?.intValue ?? 100
            try await self.context.perform { try await self.context.clock.sleep(for: .milliseconds(ms)) }
            count.value += 1
            return .int(Int64(count.value))
        }
        busy.bind(to: work.isExecuting)
        loading.bind(to: context.activity.isActive)
        context.command("once", policy: .ignore) { [unowned context] in
            try await context.perform { try await context.clock.sleep(for: .milliseconds(100)) }
            return "done"
        }
        context.command("fail", of: JSON.self, policy: .ignore) { [unowned context] value in
            let ms = value["ms"]?.intValue ?? 0
            if ms > 0 { try await context.perform { try await context.clock.sleep(for: .milliseconds(ms)) } }
            let kind = DomainError.Kind(rawValue: value["kind"]?.stringValue ?? "business") ?? .business
            throw DomainError(kind: kind, code: kind == .server ? 500 : kind == .business ? "E42" : .null, detail: "probe failure")
        }
        context.command("perKey", of: JSON.self, policy: .ignorePerKey({ $0["key"]?.stringValue ?? "" })) { [unowned context] value in
            try await context.perform { try await context.clock.sleep(for: .milliseconds(100)) }
            return value["key"]
        }
        context.command("parallel", of: JSON.self, policy: .concurrent) { [unowned context] value in
            let ms = value["ms"]?.intValue ?? 100
            try await context.perform { try await context.clock.sleep(for: .milliseconds(ms)) }
            return .int(ms)
        }
        let guarded = context.command("guarded", policy: .ignore) { nil }
        guarded.disabledReason = { [unowned self] _ in count.value < 0 ? "count is negative" : nil }
    }
}
