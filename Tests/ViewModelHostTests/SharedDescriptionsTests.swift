import Testing
import VMHostRuntime
import VMHostTesting
@_spi(Transport) import VMHostWire
@_spi(Transport) @testable import VMHostCore

/// A kind whose declarations depend on what its factory passes: two factories of it describe it
/// differently, under one kind name.
@HostActor
private final class VariantViewModel: ViewModel {
    static let kind = "SharedDescriptionsVariant"
    let always = Trigger { _ in }
    @Input var tag: String

    static func factory(extra: String?) -> ViewModelFactory {
        ViewModelFactory { _ in VariantViewModel(tag: extra) }
    }

    /// A schema of its own for each `tag`: the kind describes differently per factory.
    init(tag: String?) {
        _tag = Input(wrappedValue: "", schema: tag.map { ["type": "string", "title": .string($0)] } ?? ["type": "string"])
    }
}

/// The hosts of one process (one per WebSocket connection) share the descriptions of the kinds
/// they serve, and a host whose kind describes differently still gets its own.
@Suite("Shared descriptions")
@HostActor
struct SharedDescriptionsTests {
    private func inputNames(_ client: InProcessConnection) async -> [String] {
        let reply = await client.request("vm.create", ["kind": .string(VariantViewModel.kind)])
        return reply.result?["inputs"]?.arrayValue?.compactMap { input in
            input["value"]?["title"]?.stringValue ?? input["name"]?.stringValue
        } ?? []
    }

    @Test func hostsServingTheSameKindShareOneDescriptionAndADifferentOneStaysItsOwn() async {
        let kind = VariantViewModel.kind
        let first = InProcessConnection(kinds: [VariantViewModel.factory(extra: nil)])
        let second = InProcessConnection(kinds: [VariantViewModel.factory(extra: nil)])
        #expect(await inputNames(first) == ["always", "tag"])
        #expect(await inputNames(second) == ["always", "tag"])
        #expect(SharedDescriptions.variantCount(kind: kind) == 1)

        // Each further variant is kept until the bound; past it, a host still answers its own.
        for (number, name) in ["b", "c", "d", "e", "f"].enumerated() {
            let other = InProcessConnection(kinds: [VariantViewModel.factory(extra: name)])
            #expect(await inputNames(other) == ["always", name])
            #expect(SharedDescriptions.variantCount(kind: kind) == min(number + 2, SharedDescriptions.maxVariants))
        }
        let again = InProcessConnection(kinds: [VariantViewModel.factory(extra: nil)])
        #expect(await inputNames(again) == ["always", "tag"])
        #expect(SharedDescriptions.variantCount(kind: kind) == SharedDescriptions.maxVariants)
    }
}
