import VMHost

/// Where a page sits in a paged list: the envelope's `page` member `{index, size, total}`.
public struct PageInfo: Sendable, Hashable {
    /// The 1-based page number.
    public var index: Int
    /// The page size that was asked for (the last page may hold fewer items).
    public var size: Int
    /// The number of items in the whole list.
    public var total: Int

    public init(index: Int, size: Int, total: Int) {
        self.index = index
        self.size = size
        self.total = total
    }

    /// True when pages after this one hold items: `index × size < total`, computed without
    /// overflow (a product past `Int.max` is past any total).
    public var hasMore: Bool {
        let (covered, overflow) = index.multipliedReportingOverflow(by: size)
        return !overflow && covered < total
    }

    /// Decodes page info; `index` and `size` must be at least 1 and `total` at least 0, else a
    /// `decode` error names the member (backend.md, the envelope).
    public init(json: JSON) throws(BackendError) {
        let fields = try JSONFields(json, context: "page")
        index = try fields.int("index", atLeast: 1)
        size = try fields.int("size", atLeast: 1)
        total = try fields.int("total", atLeast: 0)
    }

    public var json: JSON { ["index": JSON(index), "size": JSON(size), "total": JSON(total)] }
}

/// One page of a paged list.
public struct Page<Item: Sendable & Hashable>: Sendable, Hashable {
    public var items: [Item]
    public var info: PageInfo

    public init(items: [Item], info: PageInfo) {
        self.items = items
        self.info = info
    }

    /// True when pages after this one hold items.
    public var hasMore: Bool { info.hasMore }
}
