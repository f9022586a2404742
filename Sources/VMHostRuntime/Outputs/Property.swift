import VMHostEventLoop
import VMHostWire

/// A value with change notification: the storage behind `@Output`, `@Input`, `@Field` and
/// `@Derived`, and a command's `isExecuting`. Setting an equal value changes nothing.
///
/// A view-model reads and writes it through its wrapper (`items = []`); the projected value
/// (`$items`) is the property itself, for what only it can do:
///
/// ```swift
/// @Output var items: [ProductCell] = []
/// ...
/// $items.append(contentsOf: page)        // costs the page, not the list: `diff` subscribers get one splice
/// $query.debounce(for: .milliseconds(300)).removeDuplicates().run(search)
/// ```
///
/// An array property can be edited in place (``append(contentsOf:)``, ``insert(_:at:)``,
/// ``remove(at:)``, ``replaceSubrange(_:with:)``, …): the edit costs what it changes, and `diff`
/// subscribers get the splice it made without the host comparing two lists. Assigning ``value``
/// still works for a change that is not known piece by piece; it is diffed whole.
///
/// Reading ``value`` while a `@Derived` output computes makes this property one of its sources.
/// A change made by a cancelled run of a command or work is dropped: a cancelled run changes
/// nothing on screen (SPEC §6).
@HostActor
public final class Property<Value: Equatable> {
    // The state below, but for `storage`, is `@exclusivity(unchecked)`: each access is a read or a
    // write, or a standard-library operation on the value, that calls out to nothing while it
    // lasts (observers and dependents are copied out before they are called), on the host thread
    // (docs/Design.md, "Exclusivity checks").

    /// The output's name on the wire; empty until the view-model is bound.
    @exclusivity(unchecked) package internal(set) var name: String
    /// The schema given at declaration, if any; else the value type's (made when asked, not stored:
    /// every view-model of a kind would otherwise hold its own copy).
    let declaredSchema: JSON?
    @exclusivity(unchecked) private var observers: [@HostActor (Value) -> Void] = []
    /// The derived outputs that read this property when they last computed.
    @exclusivity(unchecked) private var dependents: [DerivedNode] = []
    /// The context whose output this is; nil for a property that is not an output.
    @exclusivity(unchecked) weak var owner: ViewModelContext?
    /// This property as an output, once declared one (the context holds both).
    @exclusivity(unchecked) unowned(unsafe) var asOutput: (any AnyProperty)?
    /// Where it was declared among its view-model's outputs (0, 1, …); -1 when it is none.
    @exclusivity(unchecked) package internal(set) var position = -1
    /// This property among the sources derived outputs read (``DerivationSource/serial``).
    let serial = DerivedNode.makeSerial()

    /// The change since the last ``takeChange()``, kept only while ``startRecordingChanges()`` is on.
    private enum Pending {
        /// Nothing changed since the last take. A case, not an optional `Pending`: the generic code
        /// that takes a change (through `any AnyProperty`) would look up the metadata of
        /// `Optional<Pending>` at run time on every take.
        case none
        /// Assigned whole: the value at the last take, to diff against.
        case assigned(baseline: Value)
        /// Edited in place (an array): the elements the baseline had at `index…` (`removed`) are now
        /// the `inserted` elements at `index…`; everything outside is unchanged. Holds what was
        /// removed, never a copy of the list.
        case edited(index: Int, removed: Value, inserted: Int)
    }
    @exclusivity(unchecked) private var pending = Pending.none
    @exclusivity(unchecked) private var recordsChanges = false
    /// Whether `Value` is a list output (an array of encodable elements), which changes by splices:
    /// known once, not looked up at every take.
    private let isList: Bool
    /// Checked at run time, unlike the rest: comparing, encoding or editing it may call an app's
    /// code (its `==`, its `encode(to:)`, the collection an edit inserts) while the access lasts.
    private var storage: Value

    /// A property holding `initial`; `name` and `schema` matter only for an output.
    package init(_ initial: Value, name: String = "", schema: JSON? = nil) {
        self.name = name
        self.storage = initial
        self.declaredSchema = schema
        self.isList = Value.self is any ListOutputValue.Type
    }

    /// The current value. Setting an equal one does nothing; a cancelled run's setting is dropped.
    public var value: Value {
        get {
            if let node = DerivedNode.computing { node.read(self, serial: serial) }
            return storage
        }
        set {
            guard !Task.isCancelled else { return }
            set(newValue)
        }
    }

    /// Sets the value, whatever task asks: for the runtime's own flags (`isExecuting`).
    func set(_ newValue: Value) {
        guard newValue != storage else { return }
        let old = storage
        storage = newValue
        if recordsChanges {
            switch pending {
            case .none: pending = .assigned(baseline: old)
            case .assigned: break
            case .edited(let index, let removed, let inserted):
                // The baseline is the old value with the edited stretch put back.
                pending = .assigned(baseline: (old as! any ListOutputValue).restoring(index: index, removed: removed, inserted: inserted) as! Value)
            }
        }
        didChange()
    }

    /// The value, without making this property a source of a derived output computing now.
    public var untracked: Value { storage }

    /// Calls `observer` after every change, in the turn of the change, in order of registration.
    ///
    /// - Important: `observer` is kept as long as the property: it must not hold the view-model
    ///   (use ``ViewModel/observe(_:_:)`` in a kind, which hands the view-model in).
    public func observe(_ observer: @escaping @HostActor (Value) -> Void) {
        observers.append(observer)
    }

    fileprivate func didChange() {
        if let owner, let asOutput { owner.propertyDidChange(asOutput) }
        for observer in observers { observer(storage) }
        // Read once (an access to a class's stored property is checked at run time).
        let dependents = self.dependents
        for node in dependents { node.sourceChanged() }
    }

    /// Forgets every observer and dependent (the view-model was disposed).
    func tearDown() {
        observers = []
        dependents = []
    }

    // MARK: Changes, for the host

    /// Starts keeping what changes, for ``takeChange()``.
    package func startRecordingChanges() { recordsChanges = true }

    /// Stops keeping what changes and forgets what was kept.
    package func stopRecordingChanges() {
        recordsChanges = false
        pending = .none
    }
}

extension Property: DerivationSource {
    // Loops, not `contains(where:)` and `removeAll(where:)`: a closure handed to the standard
    // library checks at run time that it runs on the host actor, on every call.
    func addDependent(_ node: DerivedNode) {
        for dependent in dependents where dependent === node { return }
        dependents.append(node)
    }

    func removeDependent(_ node: DerivedNode) {
        var index = 0
        while index < dependents.count {
            if dependents[index] === node { dependents.remove(at: index) } else { index += 1 }
        }
    }
}

extension Property: AnyProperty where Value: Encodable {
    /// The value's schema: the one declared, else the value type's.
    package var schema: JSON { declaredSchema ?? OutputSchema.of(Value.self) }

    /// The value as JSON, as written on the wire.
    package var json: JSON { JSONValueEncoder.encode(storage) }

    /// A value of the output's type made of placeholders, as JSON (nil when the type cannot make
    /// one, or when the declaration refines the type's schema, which its placeholders need not meet).
    package var sample: JSON? { declaredSchema == nil ? OutputSample.of(Value.self) : nil }

    /// How the value changed since the last take, and forgets it (see ``AnyProperty/takeChange()``).
    package func takeChange() -> PropertyChange? {
        let change = pending
        if case .none = change { return nil }
        pending = .none
        switch change {
        case .none:
            return nil
        case .assigned(let baseline):
            if isList, let list = storage as? any ListOutputValue {
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
        guard !Task.isCancelled else { return }
        precondition(range.lowerBound >= 0 && range.upperBound <= storage.count, "range \(range) out of 0..<\(storage.count)")
        if range.count == elements.count && storage[range].elementsEqual(elements) { return }
        recordEdit(index: range.lowerBound, removing: range.count, inserting: elements.count)
        storage.replaceSubrange(range, with: elements)
        didChange()
    }

    /// Appends `element`.
    public func append<Element>(_ element: Element) where Value == [Element] {
        replaceSubrange(storage.count..<storage.count, with: CollectionOfOne(element))
    }

    /// Appends `elements`: `diff` subscribers get one splice of them.
    public func append<Element, S: Sequence>(contentsOf elements: S) where Value == [Element], S.Element == Element {
        replaceSubrange(storage.count..<storage.count, with: Array(elements))
    }

    /// Inserts `element` at `index`.
    public func insert<Element>(_ element: Element, at index: Int) where Value == [Element] {
        replaceSubrange(index..<index, with: CollectionOfOne(element))
    }

    /// Inserts `elements` at `index`.
    public func insert<Element, C: Collection>(contentsOf elements: C, at index: Int) where Value == [Element], C.Element == Element {
        replaceSubrange(index..<index, with: elements)
    }

    /// Removes and returns the element at `index`.
    @discardableResult
    public func remove<Element>(at index: Int) -> Element where Value == [Element] {
        let element = storage[index]
        replaceSubrange(index..<(index + 1), with: EmptyCollection())
        return element
    }

    /// Removes the elements in `range`.
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
        case .none:
            pending = .edited(index: index, removed: Array(storage[index..<(index + count)]), inserted: insertedCount)
        case .edited(let start, var removed, let inserted):
            pending = .none
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
package protocol AnyProperty: AnyObject {
    /// The output's name on the wire.
    var name: String { get }
    /// The value's JSON Schema.
    var schema: JSON { get }
    /// The value as JSON.
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
    /// A value of the output's type made of placeholders, as JSON, for the test kit.
    var sample: JSON? { get }
}

/// Values of output types made of placeholders (``CodableSchema/placeholder(of:)``), as JSON: what
/// the test kit checks an output's schema against.
enum OutputSample {
    static func of<Value>(_ type: Value.Type) -> JSON? {
        guard let decodable = type as? any Decodable.Type else { return nil }
        return sample(decodable)
    }

    private static func sample<Value: Decodable>(_ type: Value.Type) -> JSON? {
        guard let value = CodableSchema.placeholder(of: type) as? any Encodable else { return nil }
        return JSONValueEncoder.encode(value)
    }
}

/// The schemas of output values: a type that writes its own (``JSONEncodable``) by it, any other
/// `Decodable` type by its declaration (``CodableSchema``), and an encode-only type as any value.
enum OutputSchema {
    static func of<Value>(_ type: Value.Type) -> JSON {
        if let described = type as? any JSONEncodable.Type { return described.jsonSchema }
        if let decodable = type as? any Decodable.Type { return schema(decodable) }
        return [:]
    }

    private static func schema<Value: Decodable>(_ type: Value.Type) -> JSON { CodableSchema.of(type) }
}
