import VMHostWire

/// The edit that turns one list into another, as one splice `{index, remove, insert}`: the common
/// prefix and suffix are kept, the middle is replaced. Appending a page is `{index: n, remove: 0,
/// insert: page}`; a refresh that replaces everything is one splice of the whole list.
///
/// Nil when the lists are equal.
func splice(from old: [JSON], to new: [JSON]) -> JSON? {
    var prefix = 0
    let shorter = min(old.count, new.count)
    while prefix < shorter, old[prefix] == new[prefix] { prefix += 1 }
    if prefix == old.count && prefix == new.count { return nil }
    var suffix = 0
    while suffix < shorter - prefix, old[old.count - 1 - suffix] == new[new.count - 1 - suffix] { suffix += 1 }
    let removed = old.count - prefix - suffix
    let inserted = Array(new[prefix..<(new.count - suffix)])
    return ["index": .int(Int64(prefix)), "remove": .int(Int64(removed)), "insert": .array(inserted)]
}
