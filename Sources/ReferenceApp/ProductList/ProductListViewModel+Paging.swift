import Backend
import VMHost

extension ProductListViewModel {
    /// Fetches page `number` and applies it, unless the fetch fails or is cancelled.
    func load(page number: Int, replacing: Bool) async throws {
        let fetched = try await api.products(page: number, pageSize: pageSize)
        try Task.checkCancellation()
        apply(fetched, number: number, replacing: replacing)
    }

    /// Shows the pages an earlier run saved, as the list starts.
    func restore(_ saved: SavedProductPages) {
        var cells: [ProductCell] = []
        for product in saved.products where listedIDs.insert(product.id).inserted {
            cells.append(ProductCell(product, locale: context.locale))
            savedProducts.append(product)
        }
        items = cells
        page = saved.page
        hasMore = saved.hasMore
        isEmpty = cells.isEmpty
        isStale = true
        loads.succeeded()
    }

    /// Applies a fetched page in one go: the cells, then the page, `hasMore`, `isEmpty` and
    /// `isStale`. A further page is appended to ``items`` in place: it costs the page, not the list.
    /// The first ``SavedProductPages/maxPages`` pages are saved to the cache, if any.
    func apply(_ fetched: Page<Product>, number: Int, replacing: Bool) {
        if replacing {
            listedIDs = []
            savedProducts = []
        }
        var cells: [ProductCell] = []
        cells.reserveCapacity(fetched.items.count)
        let locale = context.locale
        // An item inserted before the end of the list on the server pushes earlier items onto the
        // next page; keep the first listing only.
        for product in fetched.items where listedIDs.insert(product.id).inserted {
            cells.append(ProductCell(product, locale: locale))
            if number <= SavedProductPages.maxPages { savedProducts.append(product) }
        }
        if replacing {
            items = cells
        } else {
            $items.append(contentsOf: cells)
        }
        page = number
        hasMore = fetched.hasMore
        // `cells` holds the new page only: the list is empty when nothing is listed at all.
        isEmpty = items.isEmpty
        isStale = false
        // Pages past the bound leave the saved first pages as they are (their `hasMore` is true).
        if let cache, number <= SavedProductPages.maxPages {
            cache.saveProducts(SavedProductPages(products: savedProducts, page: number, hasMore: fetched.hasMore), pageSize: pageSize)
        }
    }
}
