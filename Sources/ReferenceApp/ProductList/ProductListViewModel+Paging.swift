import Backend
import VMHostRuntime

extension ProductListViewModel {
    /// Fetches page `number` and applies it, unless the fetch fails or is cancelled.
    func load(page number: Int, replacing: Bool) async throws {
        let fetched = try await context.perform { try await api.products(page: number, pageSize: pageSize) }
        apply(fetched, number: number, replacing: replacing)
    }

    /// Applies a fetched page in one go: the cells, then the page, `hasMore` and `isEmpty`. A
    /// further page is appended to ``items`` in place: it costs the page, not the list.
    func apply(_ fetched: Page<Product>, number: Int, replacing: Bool) {
        if replacing { listedIDs = [] }
        var cells: [ProductCell] = []
        // An item inserted before the end of the list on the server pushes earlier items onto the
        // next page; keep the first listing only.
        for product in fetched.items where listedIDs.insert(product.id).inserted {
            cells.append(ProductCell(product, locale: context.locale))
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
        loads.succeeded(empty: items.value.isEmpty)
    }
}
