import Backend
import VMHostRuntime

extension ProductListViewModel {
    /// Fetches page `number` and applies it, unless the fetch fails or is cancelled.
    func load(page number: Int, replacing: Bool) async throws {
        let fetched = try await context.perform { try await api.products(page: number, pageSize: pageSize) }
        apply(fetched, number: number, replacing: replacing)
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
        // An item inserted before the end of the list on the server pushes earlier items onto the
        // next page; keep the first listing only.
        for product in fetched.items where listedIDs.insert(product.id).inserted {
            cells.append(ProductCell(product, locale: context.locale))
            if number <= SavedProductPages.maxPages { savedProducts.append(product) }
        }
        if replacing {
            items.value = cells
        } else {
            items.append(contentsOf: cells)
        }
        page.value = number
        hasMore.value = fetched.hasMore
        // `cells` holds the new page only: the list is empty when nothing is listed at all.
        isEmpty.value = items.value.isEmpty
        isStale.value = false
        loads.succeeded(empty: items.value.isEmpty)
        // Pages past the bound leave the saved first pages as they are (their `hasMore` is true).
        if let cache, number <= SavedProductPages.maxPages {
            cache.saveProducts(SavedProductPages(products: savedProducts, page: number, hasMore: fetched.hasMore), pageSize: pageSize)
        }
    }
}
