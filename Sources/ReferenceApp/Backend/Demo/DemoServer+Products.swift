import VMHost

extension DemoServer {
    /// The largest page size the server accepts.
    public static let maxPageSize = 100

    /// `GET /products?page=N&pageSize=M`: page N (1-based) of the ``productCount`` products; a page past the end
    /// is empty and still carries the page info.
    func products(_ query: [String: String]) -> DemoResponse {
        let page: Int
        let size: Int
        if let raw = query["page"] {
            guard let value = Int(raw), value >= 1 else { return Self.badRequest("page must be an integer ≥ 1") }
            page = value
        } else {
            page = 1
        }
        if let raw = query["pageSize"] {
            guard let value = Int(raw), (1...Self.maxPageSize).contains(value) else {
                return Self.badRequest("pageSize must be an integer from 1 to \(Self.maxPageSize)")
            }
            size = value
        } else {
            size = 20
        }
        let total = productCount
        let (start, overflow) = (page - 1).multipliedReportingOverflow(by: size)
        let items = overflow || start >= total ? [] : (start..<min(start + size, total)).map { DemoCatalog.product(at: $0).json }
        return .ok(.array(items), page: PageInfo(index: page, size: size, total: total))
    }
}
