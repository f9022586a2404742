import Backend
import VMHostRuntime

extension ProductListViewModel {
    /// Fetches page `number` and applies it, unless the fetch fails or is cancelled.
    func load(page number: Int, replacing: Bool) async throws {
        let fetched = try await context.perform { try await api.products(page: number, pageSize: pageSize) }
        apply(fetched, number: number, replacing: replacing)
    }

    /// Applies a fetched page in one go: the cells, then the page, `hasMore` and `isEmpty`.
    func apply(_ fetched: Page<Product>, number: Int, replacing: Bool) {
        var cells = replacing ? [] : items.value
        var ids = replacing ? [] : listedIDs
        // An item inserted before the end of the list on the server pushes earlier items onto the
        // next page; keep the first listing only.
        for product in fetched.items where ids.insert(product.id).inserted {
            cells.append(ProductCell(product, locale: context.locale))
        }
        listedIDs = ids
        items.value = cells
        page.value = number
        hasMore.value = fetched.hasMore
        isEmpty.value = cells.isEmpty
        loads.succeeded(empty: cells.isEmpty)
    }
}
