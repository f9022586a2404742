import VMHostEventLoop
import VMHostWire

/// An output with a current value (a BehaviorSubject, a Driver): subscribers get the value now and
/// every later change. Setting an equal value changes nothing and sends nothing.
///
/// ```swift
/// let page: Property<Int>
/// init(context: ViewModelContext) {
///     page = context.property("page", 0)
/// }
/// ...
/// page.value = 2      // subscribers of "page" see 2 in this turn's vm.changed
/// ```
///
/// An array property can also be edited in place (``append(contentsOf:)``, ``insert(_:at:)``,
/// ``remove(at:)``, ``replaceSubrange(_:with:)``, …): the edit costs what it changes, and
/// `diff` subscribers get the splice it made without the host comparing two lists. Assigning
/// ``value`` still works for a change that is not known piece by piece; it is diffed whole.
@HostActor
public final class Property<Value: Equatable & JSONEncodable>: AnyProperty {
    public let name: String
    /// The schema given at declaration, if any; else the value type's (made when asked, not stored:
    /// every view-model of a kind would otherwise hold its own copy).
    private let declaredSchema: JSON?
    public var schema: JSON { declaredSchema ?? Value.jsonSchema }
    private var observers: [Observer] = []

    /// Called after a change, in order of registration.
    private enum Observer {
        case value((Value) -> Void)
        /// Shared by every source of a ``derive(_:from:_:)``: one closure, however many sources.
        case change(() -> Void)
    }
    weak var owner: ViewModelContext?
    /// Where it was declared among its view-model's properties (0, 1, …); -1 when undeclared.
    public internal(set) var position = -1

    /// The change since the last ``takeChange()``, kept only while ``startRecordingChanges()`` is on.
    private enum Pending {
        /// Assigned whole: the value at the last take, to diff against.
        case assigned(baseline: Value)
        /// Edited in place (an array): the elements the baseline had at `index…` (`removed`) are now
        /// the `inserted` elements at `index…`; everything outside is unchanged. Holds what was
        /// removed, never a copy of the list.
        case edited(index: Int, removed: Value, inserted: Int)
    }
    private var pending: Pending?
    private var recordsChanges = false
    private var storage: Value

    public var value: Value {
        get { storage }
        set {
            guard newValue != storage else { return }
            let old = storage
            storage = newValue
            if recordsChanges {
                switch pending {
                case nil: pending = .assigned(baseline: old)
                case .assigned: break
                case .edited(let index, let removed, let inserted):
                    // The baseline is the old value with the edited stretch put back.
                    pending = .assigned(baseline: (old as! any ListOutputValue).restoring(index: index, removed: removed, inserted: inserted) as! Value)
                }
            }
            didChange()
        }
    }

    public init(_ name: String, _ initial: Value, schema: JSON? = nil) {
        self.name = name
        self.storage = initial
        self.declaredSchema = schema
    }

    /// The value as JSON, as written on the wire.
    public var json: JSON { storage.json }

    /// Calls `observer` after every change, in the turn of the change (for derived state).
    public func observe(_ observer: @escaping (Value) -> Void) {
        observers.append(.value(observer))
    }

    /// Keeps this property equal to `transform(source.value)`, now and after every change of `source`.
    public func bind<Source>(to source: Property<Source>, _ transform: @escaping (Source) -> Value) {
        value = transform(source.value)
        source.observe { [unowned self] in self.value = transform($0) }
    }

    /// Keeps this property equal to `source`.
    public func bind(to source: Property<Value>) {
        bind(to: source) { $0 }
    }

    private func didChange() {
        owner?.propertyDidChange(self)
        for observer in observers {
            switch observer {
            case .value(let observe): observe(storage)
            case .change(let handle): handle()
            }
        }
    }

    // MARK: Changes, for the host

    public func startRecordingChanges() { recordsChanges = true }

    public func stopRecordingChanges() {
        recordsChanges = false
        pending = nil
    }

    public func takeChange() -> PropertyChange? {
        guard let change = pending else { return nil }
        pending = nil
        switch change {
        case .assigned(let baseline):
            if let list = storage as? any ListOutputValue {
                return list.splice(from: baseline).map(PropertyChange.splice)
            }
            return baseline == storage ? nil : .value
        case .edited(let index, let removed, let inserted):
            return (storage as! any ListOutputValue).splice(at: index, replacing: removed, inserted: inserted).map(PropertyChange.splice)
        }
    }
}

// MARK: - Editing an array property in place

extension Property {
    /// Replaces the elements in `range` with `elements` (`Array.replaceSubrange`); every other edit
    /// is one of these. Nothing changes, and nothing is sent, when the elements are equal.
    public func replaceSubrange<Element, C: Collection>(_ range: Range<Int>, with elements: C)
    where Value == [Element], C.Element == Element {
        precondition(range.lowerBound >= 0 && range.upperBound <= storage.count, "range \(range) out of 0..<\(storage.count)")
        if range.count == elements.count && storage[range].elementsEqual(elements) { return }
        recordEdit(index: range.lowerBound, removing: range.count, inserting: elements.count)
        storage.replaceSubrange(range, with: elements)
        didChange()
    }

    public func append<Element>(_ element: Element) where Value == [Element] {
        replaceSubrange(storage.count..<storage.count, with: CollectionOfOne(element))
    }

    public func append<Element, S: Sequence>(contentsOf elements: S) where Value == [Element], S.Element == Element {
        replaceSubrange(storage.count..<storage.count, with: Array(elements))
    }

    public func insert<Element>(_ element: Element, at index: Int) where Value == [Element] {
        replaceSubrange(index..<index, with: CollectionOfOne(element))
    }

    public func insert<Element, C: Collection>(contentsOf elements: C, at index: Int) where Value == [Element], C.Element == Element {
        replaceSubrange(index..<index, with: elements)
    }

    @discardableResult
    public func remove<Element>(at index: Int) -> Element where Value == [Element] {
        let element = storage[index]
        replaceSubrange(index..<(index + 1), with: EmptyCollection())
        return element
    }

    public func removeSubrange<Element>(_ range: Range<Int>) where Value == [Element] {
        replaceSubrange(range, with: EmptyCollection())
    }

    /// Removes every element that matches, one run of neighbours at a time.
    public func removeAll<Element>(where shouldRemove: (Element) throws -> Bool) rethrows where Value == [Element] {
        var end = storage.count
        while end > 0 {
            guard let last = try storage[..<end].lastIndex(where: shouldRemove) else { return }
            var first = last
            while first > 0, try shouldRemove(storage[first - 1]) { first -= 1 }
            removeSubrange(first..<(last + 1))
            end = first
        }
    }

    /// Replaces the element at `index`.
    public func replace<Element>(at index: Int, with element: Element) where Value == [Element] {
        replaceSubrange(index..<(index + 1), with: CollectionOfOne(element))
    }

    /// Records that `count` elements at `index` are about to be replaced by `insertedCount` others,
    /// before the storage changes: the pending edit grows to cover both stretches, keeping the
    /// baseline's elements it takes in.
    private func recordEdit<Element>(index: Int, removing count: Int, inserting insertedCount: Int) where Value == [Element] {
        guard recordsChanges else { return }
        switch pending {
        case .assigned:
            return
        case nil:
            pending = .edited(index: index, removed: Array(storage[index..<(index + count)]), inserted: insertedCount)
        case .edited(let start, var removed, let inserted):
            pending = nil
            let end = start + inserted
            let low = min(start, index)
            let high = max(end, index + count)
            // What lies between the two stretches is the baseline's, unchanged: it joins the edit.
            if low < start { removed.insert(contentsOf: storage[low..<start], at: 0) }
            if high > end { removed.append(contentsOf: storage[end..<high]) }
            pending = .edited(index: low, removed: removed, inserted: high - low - count + insertedCount)
        }
    }
}

/// A property seen without its value type: what the host reads.
@HostActor
public protocol AnyProperty: AnyObject {
    var name: String { get }
    var schema: JSON { get }
    var json: JSON { get }
    /// Where it was declared among its view-model's properties (0, 1, …).
    var position: Int { get }
    /// Starts keeping what changes, for ``takeChange()`` (the host does while it has subscribers).
    func startRecordingChanges()
    /// Stops keeping what changes and forgets what was kept.
    func stopRecordingChanges()
    /// How the value changed since the last call (or since recording started), and forgets it; nil
    /// when it ends equal to what it was then.
    func takeChange() -> PropertyChange?
}

/// Recomputes `compute()` into `target` whenever one of `sources` changes (combineLatest +
/// distinctUntilChanged): the target changes, and is sent, only when the computed value differs.
@HostActor
public func derive<Value>(_ target: Property<Value>, from sources: [any ObservableProperty], _ compute: @escaping () -> Value) {
    target.value = compute()
    let update = { [unowned target] in target.value = compute() }
    for source in sources { source.onChange(update) }
}

/// A property that can report changes without its type: for ``derive(_:from:_:)``.
@HostActor
public protocol ObservableProperty: AnyObject {
    func onChange(_ handler: @escaping () -> Void)
}

extension Property: ObservableProperty {
    public func onChange(_ handler: @escaping () -> Void) { observers.append(.change(handler)) }
}
