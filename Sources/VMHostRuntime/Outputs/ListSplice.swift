import VMHostWire

/// How a property changed since the host last took its change.
package enum PropertyChange: Sendable, Equatable {
    /// Send the value whole.
    case value
    /// An array property: the splice that turns the value last taken into the current one. A
    /// subscriber without `diff` gets the value whole instead.
    case splice(ListSplice)
}

/// One list edit on the wire: remove `remove` elements at `index`, insert `insert` there.
package struct ListSplice: Sendable, Equatable {
    package var index: Int
    package var remove: Int
    package var insert: [JSON]

    package init(index: Int, remove: Int, insert: [JSON]) {
        self.index = index
        self.remove = remove
        self.insert = insert
    }

    /// `{index, remove, insert}`.
    package var json: JSON {
        ["index": .int(Int64(index)), "remove": .int(Int64(remove)), "insert": .array(insert)]
    }

    /// The one splice that turns `old` into `new`, both starting at `index` of their lists: their
    /// common prefix and suffix are kept, the middle is replaced, and only the middle is made JSON.
    /// Appending a page is `{index: n, remove: 0, insert: page}`. Nil when they are equal.
    package init?<Element: Equatable & Encodable>(from old: ArraySlice<Element>, to new: ArraySlice<Element>, at index: Int) {
        let shorter = min(old.count, new.count)
        var prefix = 0
        while prefix < shorter, old[old.startIndex + prefix] == new[new.startIndex + prefix] { prefix += 1 }
        if prefix == old.count && prefix == new.count { return nil }
        var suffix = 0
        while suffix < shorter - prefix, old[old.endIndex - 1 - suffix] == new[new.endIndex - 1 - suffix] { suffix += 1 }
        self.init(
            index: index + prefix, remove: old.count - prefix - suffix,
            insert: JSONValueEncoder.encode(elements: new[(new.startIndex + prefix)..<(new.endIndex - suffix)]))
    }

    /// The one splice that turns the list `old` into `new`; nil when they are equal.
    package init?<Element: Equatable & Encodable>(from old: [Element], to new: [Element]) {
        self.init(from: old[...], to: new[...], at: 0)
    }
}

/// An array value, seen without its element type: what ``Property`` needs to turn a change into a
/// splice.
protocol ListOutputValue {
    /// The splice from `baseline` (a value of this type) to this value.
    func splice(from baseline: Any) -> ListSplice?
    /// The splice of a pending edit: `removed` (a value of this type) at `index` became `inserted`
    /// elements of this value there.
    func splice(at index: Int, replacing removed: Any, inserted: Int) -> ListSplice?
    /// This value with the elements of a pending edit put back as they were.
    func restoring(index: Int, removed: Any, inserted: Int) -> Any
}

extension Array: ListOutputValue where Element: Equatable & Encodable {
    func splice(from baseline: Any) -> ListSplice? {
        ListSplice(from: baseline as! [Element], to: self)
    }

    func splice(at index: Int, replacing removed: Any, inserted: Int) -> ListSplice? {
        ListSplice(from: (removed as! [Element])[...], to: self[index..<(index + inserted)], at: index)
    }

    func restoring(index: Int, removed: Any, inserted: Int) -> Any {
        var old = self
        old.replaceSubrange(index..<(index + inserted), with: removed as! [Element])
        return old
    }
}
