@_spi(Transport) import VMHostEventLoop
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
@testable import VMHostRuntime

/// `splice` applied to `list` (JavaScript `Array.splice`).
func applying(_ splice: ListSplice, to list: [JSON]) -> [JSON] {
    var list = list
    list.replaceSubrange(splice.index..<(splice.index + splice.remove), with: splice.insert)
    return list
}

/// One random edit of `property`, through the operation a view-model would use. Small values, so
/// that an edit often puts back what was there (and the turn ends unchanged).
@HostActor
func randomEdit(of property: Property<[Int]>, using random: inout SeededGenerator) {
    let count = property.value.count
    let element = Int.random(in: 0..<4, using: &random)
    let index = Int.random(in: 0...count, using: &random)
    switch Int.random(in: 0..<9, using: &random) {
    case 0: property.append(element)
    case 1: property.append(contentsOf: (0..<Int.random(in: 0..<4, using: &random)).map { $0 % 4 })
    case 2: property.insert(element, at: index)
    case 3: property.insert(contentsOf: [element, element], at: index)
    case 4 where count > 0: property.remove(at: Int.random(in: 0..<count, using: &random))
    case 5 where count > 0: property.replace(at: Int.random(in: 0..<count, using: &random), with: element)
    case 6:
        let end = Int.random(in: index...count, using: &random)
        property.replaceSubrange(index..<end, with: Array(repeating: element, count: Int.random(in: 0..<3, using: &random)))
    case 7: property.removeAll { $0 == element }
    case 8 where Int.random(in: 0..<4, using: &random) == 0:
        // Now and then the whole value, as a view-model does when the change is not known.
        property.value = (0..<Int.random(in: 0..<8, using: &random)).map { _ in Int.random(in: 0..<4, using: &random) }
    default: property.removeSubrange(index..<index)
    }
}

@Suite("List edits")
@HostActor
struct ListEditTests {
    /// Random turns of random edits: the splice taken at the end of each turn, applied to the list
    /// as it was, gives the list as it is; it is nil exactly when the turn ends where it began, and
    /// it is as small as the diff of the two whole values (which it replaces).
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func theSpliceOfATurnsEditsIsTheDiffOfItsValues(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let list = Property([Int](), name: "list")
        list.startRecordingChanges()
        var sent = list.value.map(\.json)
        var spliced = 0
        for _ in 0..<2_000 {
            for _ in 0..<Int.random(in: 1...5, using: &random) { randomEdit(of: list, using: &random) }
            let now = list.value.map(\.json)
            let whole = ListSplice(from: sent, to: now)
            let change = list.takeChange()
            switch change {
            case .splice(let splice)?:
                #expect(applying(splice, to: sent) == now)
                #expect(splice.remove == whole?.remove && splice.insert.count == whole?.insert.count)
                spliced += 1
            case nil:
                #expect(whole == nil)
            case .value?:
                Issue.record("an array property reported a whole value")
            }
            #expect(list.takeChange() == nil)
            sent = now
        }
        // The sequences exercise both outcomes.
        #expect(spliced > 500 && spliced < 2_000)
    }

    @Test func anEditBackToTheValueSentIsNoChange() async {
        let test = ViewModelTest { Numbers(list: [1, 2, 3]) }
        let list = test.viewModel.$list
        list.startRecordingChanges()
        list.append(4)
        list.remove(at: 3)
        #expect(list.takeChange() == nil)
        list.replace(at: 0, with: 1)
        list.append(contentsOf: [])
        // The kit records as the host sends: the turn ends where it began, so nothing.
        test.expect([])
        await test.finish()
    }

    @Test func anAppendIsSplicedWithoutTheListBeforeIt() {
        let list = Property(Array(0..<1_000), name: "list")
        list.startRecordingChanges()
        list.append(contentsOf: [7, 8])
        #expect(list.takeChange() == .splice(ListSplice(index: 1_000, remove: 0, insert: [7, 8])))
        // Edits far apart in one turn become one splice covering both.
        list.remove(at: 0)
        list.append(9)
        let change = list.takeChange()
        #expect(change == .splice(ListSplice(index: 0, remove: 1_002, insert: (1..<1_000).map { JSON.int(Int64($0)) } + [7, 8, 9] as [JSON])))
    }

    @Test func withoutRecordingNothingIsKept() {
        let list = Property([1], name: "list")
        list.append(2)
        #expect(list.takeChange() == nil)
        list.startRecordingChanges()
        list.value = [3]
        list.stopRecordingChanges()
        #expect(list.takeChange() == nil)
    }

    @Test func aScalarChangeIsSentWholeUnlessItEndsWhereItBegan() {
        let count = Property(0, name: "count")
        count.startRecordingChanges()
        count.value = 1
        count.value = 0
        #expect(count.takeChange() == nil)
        count.value = 2
        #expect(count.takeChange() == .value)
    }
}

/// A kind with one list output, for the edits a view-model makes.
@HostActor
final class Numbers: ViewModel {
    static let kind = "Numbers"
    @Output var list: [Int]
    init(list: [Int]) { self.list = list }
}
