import Backend
import HTTPBackend
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import Testing
@_spi(Transport) import VMHostWire

/// A demo catalogue of another size than 57 (`vmhost --demo-products N`): the same rule, continued
/// past `p057`, served in pages like the standard one.
@Suite struct LargeCatalogTests {
    @Test func theRuleContinuesPastTheStandardCatalogue() {
        let products = DemoCatalog.products(count: 5000)
        #expect(products.count == 5000)
        #expect(Set(products.map(\.id)).count == 5000)
        #expect(Array(products.prefix(57)) == DemoCatalog.products)
        #expect(products[57] == Product(
            id: "p058", name: "季季红58号", bank: "工商银行", annualRate: 3.44, saleStatus: .onSale,
            termDays: 180, minAmount: 50000))
        #expect(products[999] == Product(
            id: "p1000", name: "季季红1000号", bank: "兴业银行", annualRate: 3.98, saleStatus: .upcoming,
            termDays: 30, minAmount: 50000))
        #expect(products[4999] == Product(
            id: "p5000", name: "安心盈5000号", bank: "兴业银行", annualRate: 3.98, saleStatus: .upcoming,
            termDays: 30, minAmount: 10000))
        #expect(products.allSatisfy { (3.0..<5.0).contains($0.annualRate) })
    }

    @Test func fiveThousandProductsAreFiftyPagesOfOneHundred() {
        var server = DemoServer(productCount: 5000)
        #expect(server.productCount == 5000)
        var ids: [String] = []
        for page in 1...50 {
            let response = server.handle(
                DemoRequest(method: "GET", path: "/products", query: ["page": "\(page)", "pageSize": "100"]))
            let items = response.body["data"]?.arrayValue ?? []
            #expect(items.count == 100)
            #expect(response.body["page"] == ["index": JSON(page), "size": 100, "total": 5000])
            ids += items.compactMap { $0["id"]?.stringValue }
        }
        #expect(ids == (1...5000).map(Self.id))
        let past = server.handle(DemoRequest(method: "GET", path: "/products", query: ["page": "51", "pageSize": "100"]))
        #expect(past.body["data"] == [])
        #expect(past.body["page"] == ["index": 51, "size": 100, "total": 5000])
    }

    /// `p001` … `p999`, then `p1000` …
    static func id(_ number: Int) -> String {
        let digits = String(number)
        return "p" + String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }

    @Test func anEmptyCatalogueAnswersEmptyPages() {
        var server = DemoServer(productCount: 0)
        let response = server.handle(DemoRequest(method: "GET", path: "/products"))
        #expect(response.status == 200)
        #expect(response.body["data"] == [])
        #expect(response.body["page"] == ["index": 1, "size": 20, "total": 0])
    }

    @Test func theStandardCatalogueIsTheDefault() {
        #expect(DemoServer().productCount == 57)
        #expect(DemoCatalog.productCountRange.contains(57))
        #expect(DemoCatalog.productCountRange.contains(0))
        #expect(!DemoCatalog.productCountRange.contains(-1))
    }

    @Test @HostActor func theEmbeddedBackendServesItsCatalogueSizeAndKeepsItOnReset() async throws {
        let backend = EmbeddedBackend(clock: ManualClock(), productCount: 5000)
        let page49 = try await backend.products(page: 49, pageSize: 100)
        #expect(page49.hasMore)
        #expect(page49.items.first?.id == "p4801")
        let page50 = try await backend.products(page: 50, pageSize: 100)
        #expect(!page50.hasMore)
        #expect(page50.items.map(\.id) == (4901...5000).map { "p\($0)" })
        backend.reset()
        #expect(backend.server.productCount == 5000)
        #expect(try await backend.products(page: 50, pageSize: 100).items.count == 100)
    }

    @Test @HostActor func theCommandLineSizeReachesTheEmbeddedBackend() async throws {
        let client = BackendOption.embedded.makeClient(clock: ManualClock(), timeout: .seconds(15), demoProductCount: 130)
        let backend = try #require(client as? EmbeddedBackend)
        #expect(backend.productCount == 130)
        let last = try await backend.products(page: 2, pageSize: 100)
        #expect(last.items.count == 30)
        #expect(!last.hasMore)
    }
}
