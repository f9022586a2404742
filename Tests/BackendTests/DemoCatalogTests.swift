import Backend
import Testing
@_spi(Transport) import VMHostWire

/// The demo data is what `protocol/backend.md` promises.
@Suite struct DemoCatalogTests {
    @Test func fiftySevenProductsByTheDocumentedRule() {
        let products = DemoCatalog.products
        #expect(products.count == 57)
        #expect(Set(products.map(\.id)).count == 57)
        #expect(products.first == Product(
            id: "p001", name: "稳健增利1号", bank: "招商银行", annualRate: 4.35, saleStatus: .onSale,
            termDays: 90, minAmount: 50000))
        #expect(products[3].saleStatus == .soldOut)
        #expect(products[4].saleStatus == .upcoming)
        #expect(products.last?.id == "p057")
        #expect(Set(products.map(\.saleStatus)) == Set(SaleStatus.allCases))
        #expect(products.allSatisfy { (3.0..<5.0).contains($0.annualRate) })
    }

    /// English names (protocol/backend.md): every product and bank of the catalogue, past `p057`
    /// too, and the four groups; any other name as it is, and Chinese unchanged.
    @Test func theDemoNamesInEnglish() {
        #expect(DemoCatalog.name("稳健增利1号", in: .en) == "Steady Growth 1")
        #expect(DemoCatalog.name("安心盈2号", in: .en) == "Peace of Mind 2")
        #expect(DemoCatalog.name("季季红1000号", in: .en) == "Quarterly Red 1000")
        #expect(DemoCatalog.name("招商银行", in: .en) == "CMB")
        #expect(DemoCatalog.name("兴业银行", in: .en) == "CIB")
        #expect(DemoCatalog.groups.map { DemoCatalog.name($0.name, in: .en) }
            == ["Signature Hot Dishes", "Cold Starters", "Staples & Dim Sum", "Drinks"])
        for product in DemoCatalog.products(count: 120) {
            for name in [product.name, product.bank] {
                let english = DemoCatalog.name(name, in: .en)
                let ascii = english.unicodeScalars.allSatisfy { $0.isASCII }
                #expect(ascii, "\(name) → \(english)")
                #expect(DemoCatalog.name(name, in: .zhHans) == name)
            }
        }
        for other in ["汤羹", "安心盈号", "安心盈2号半", "安心盈二号", "Soup", "", "号"] {
            #expect(DemoCatalog.name(other, in: .en) == other)
        }
    }

    @Test func menuM1HasFourGroups() {
        #expect(DemoCatalog.groups.map(\.id) == ["g1", "g2", "g3", "g4"])
    }

    @Test(arguments: [
        ("13800138000", true), ("19912345678", true), ("12800138000", false), ("1380013800", false),
        ("138001380001", false), ("1380013800a", false), ("", false), ("１3800138000", false),
    ])
    func mobileNumbers(phone: String, valid: Bool) {
        #expect(DemoServer.isMobileNumber(phone) == valid)
    }

    @Test func unknownRoutesAndMethods() {
        var server = DemoServer()
        #expect(server.handle(DemoRequest(method: "GET", path: "/nope")).status == 404)
        #expect(server.handle(DemoRequest(method: "POST", path: "/products")).status == 405)
        #expect(server.handle(DemoRequest(method: "GET", path: "/auth/login")).status == 405)
        #expect(server.handle(DemoRequest(method: "PATCH", path: "/menus/m1/groups/g1")).status == 405)
        #expect(server.handle(DemoRequest(method: "POST", path: "/auth/login", body: ["username": "x"])).status == 400)
    }

    @Test(arguments: [["page": "0"], ["page": "x"], ["pageSize": "0"], ["pageSize": "101"]])
    func badPagingIsABadRequest(query: [String: String]) {
        var server = DemoServer()
        #expect(server.handle(DemoRequest(method: "GET", path: "/products", query: query)).status == 400)
    }

    @Test func pagingDefaultsToThePageSizeOfTwenty() {
        var server = DemoServer()
        let response = server.handle(DemoRequest(method: "GET", path: "/products"))
        #expect(response.body["data"]?.arrayValue?.count == 20)
        #expect(response.body["page"] == ["index": 1, "size": 20, "total": 57])
    }

    @Test func percentEncodedSegmentsAreDecoded() {
        var server = DemoServer()
        let response = server.handle(DemoRequest(method: "GET", path: "/menus/%6D1/groups"))
        #expect(response.status == 200)
    }
}
