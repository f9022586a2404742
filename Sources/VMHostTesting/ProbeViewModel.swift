import VMHost

/// A test-only kind that exercises every runtime primitive; used by the host and runtime tests.
///
/// Outputs: `count`, `text` (a field), `items` (a list, for diffs), `busy` (`work` running),
/// `loading` (any run of the view-model), events `pinged`, `error`.
/// Inputs: `text` (value), `increment` / `bump {by}` / `emit` / `append {items}` / `reset` (triggers),
/// `work {ms?}` (latest), `once` (ignore), `fail {kind, ms?}` (ignore), `perKey {key}`
/// (ignorePerKey), `parallel {ms}` (concurrent), `guarded` (disabled while count < 0).
@HostActor
package final class ProbeViewModel: ViewModel {
    package static let kind = "Probe"

    package struct Args: ViewModelArgs {
        package var start: Int
        package init(start: Int = 0) { self.start = start }
        package init(reader: ObjectReader) throws(JSONDecodingError) {
            start = try reader.optional("start", default: 0)
        }
    }

    @Output package var count = 0
    @Field package var text = ""
    @Output package var items: [String] = []
    @Derived({ $0.work.isRunning }) package var busy: Bool
    @Derived({ $0.context.isBusy }) package var loading: Bool
    package let pinged = Event<Int>()

    package let increment = Trigger { vm in vm.count += 1 }
    package let bump = Trigger(of: JSONObject.self) { vm, value throws(InputError) in
        guard let by = value["by"]?.intValue else {
            throw .invalidValue(JSONDecodingError(path: "params.value.by", problem: "is required (an integer)"))
        }
        vm.count += Int(by)
    }
    package let emit = Trigger { vm in
        vm.count += 1
        vm.pinged.emit(vm.count)
        vm.count += 1
    }
    package let append = Trigger(of: [String].self) { vm, items in vm.items += items }
    package let reset = Trigger { vm in
        vm.count = 0
        vm.items = []
    }
    package let work = Command(.latest, of: JSON.self, returning: Int.self) { vm, value in
        try await vm.context.clock.sleep(for: .milliseconds(value["ms"]?.intValue ?? 100))
        vm.count += 1
        return vm.count
    }
    package let once = Command(.ignore, returning: String.self) { vm in
        try await vm.context.clock.sleep(for: .milliseconds(100))
        return "done"
    }
    package let fail = Command(.ignore, of: JSON.self) { vm, value in
        let ms = value["ms"]?.intValue ?? 0
        if ms > 0 { try await vm.context.clock.sleep(for: .milliseconds(ms)) }
        let kind = value["kind"]?.stringValue ?? "business"
        throw DomainError(
            kind: kind, code: kind == "server" ? 500 : kind == "business" ? "E42" : .null, message: "probe failed (\(kind))",
            detail: "probe failure")
    }
    package let perKey = Command(.ignorePerKey { $0["key"]?.stringValue ?? "" }, of: JSON.self, returning: JSON.self) { vm, value in
        try await vm.context.clock.sleep(for: .milliseconds(100))
        return value["key"] ?? .null
    }
    package let parallel = Command(.concurrent, of: JSON.self, returning: Int64.self) { vm, value in
        let ms = value["ms"]?.intValue ?? 100
        try await vm.context.clock.sleep(for: .milliseconds(ms))
        return ms
    }
    package let guarded = Command(.ignore, disabled: { $0.count < 0 ? "count is negative" : nil }) { _ in }

    package static func factory() -> ViewModelFactory {
        ViewModelFactory { args in ProbeViewModel(args: args) }
    }

    package init(args: Args) {
        count = args.start
    }
}
