import Backend
@_spi(Transport) import VMHostEventLoop
import ProductList
import VMHostRuntime
import Testing
@_spi(Transport) import VMHostWire

extension ProductListSuites {
    /// Cells format the model exactly as the protocol says, in both locales.
    @Suite(.timeLimit(.minutes(1)))
    @HostActor
    struct CellFormatTests {
        func product(rate: Double = 4.35, status: SaleStatus = .onSale, days: Int = 180, amount: Int = 50_000) -> Product {
            Product(id: "p1", name: "稳健增利1号", bank: "招商银行", annualRate: rate, saleStatus: status, termDays: days, minAmount: amount)
        }

        @Test func theFirstDemoProductInChinese() {
            let cell = ProductCell(DemoCatalog.products[0], locale: .zhHans)
            #expect(JSONValueEncoder.encode(cell) == [
                "id": "p001", "name": "稳健增利1号", "bank": "招商银行", "profit": "4.35%", "saleStatus": "在售",
                "saleStatusCode": "onSale", "term": "90天", "amount": "¥50,000",
            ])
        }

        @Test func theFirstDemoProductInEnglish() {
            let cell = ProductCell(DemoCatalog.products[0], locale: .en)
            #expect(JSONValueEncoder.encode(cell) == [
                "id": "p001", "name": "Steady Growth 1", "bank": "CMB", "profit": "4.35%", "saleStatus": "On sale",
                "saleStatusCode": "onSale", "term": "90 days", "amount": "¥50,000",
            ])
        }

        /// Cell formatting is total: the hundredths of these do not fit in an Int (decoding refuses
        /// them first, see HostileBodyTests; a cell made from such a model still must not trap).
        @Test(arguments: [(1e17, "1e+17%"), (-1e17, "-1e+17%"), (1e300, "1e+300%"), (92233720368547758.0, "9.223372036854776e+16%")])
        func aRateBeyondIntIsWrittenWithoutTrapping(rate: Double, text: String) {
            #expect(ProductCell(product(rate: rate), locale: .en).profit == text)
        }

        @Test func extremeTermsAndAmountsAreWritten() {
            let cell = ProductCell(product(days: .max, amount: .min), locale: .en)
            #expect(cell.term == "9223372036854775807 days")
            #expect(cell.amount == "¥-9,223,372,036,854,775,808")
        }

        @Test(arguments: [(SaleStatus.onSale, "onSale"), (.soldOut, "soldOut"), (.upcoming, "upcoming")])
        func theSaleStatusCodeIsTheSameInEveryLocale(status: SaleStatus, code: String) {
            // As the wire writes it.
            #expect(JSONValueEncoder.encode(ProductCell(product(status: status), locale: .zhHans))["saleStatusCode"] == .string(code))
            #expect(JSONValueEncoder.encode(ProductCell(product(status: status), locale: .en))["saleStatusCode"] == .string(code))
            #expect(ProductCell(product(status: status), locale: .zhHans).saleStatus != ProductCell(product(status: status), locale: .en).saleStatus)
        }

        @Test(arguments: [
            (4.35, "4.35%"), (3.0, "3.00%"), (4.5, "4.50%"), (0.05, "0.05%"), (12.346, "12.35%"), (4.999, "5.00%"),
            (0, "0.00%"), (-0.5, "-0.50%"),
        ])
        func profitHasTwoDecimalsAndAPercentSign(rate: Double, text: String) {
            #expect(ProductCell(product(rate: rate), locale: .zhHans).profit == text)
            #expect(ProductCell(product(rate: rate), locale: .en).profit == text)
        }

        @Test(arguments: [
            (SaleStatus.onSale, "在售", "On sale"), (.soldOut, "已售罄", "Sold out"), (.upcoming, "即将发售", "Upcoming"),
        ])
        func saleStatusInBothLocales(status: SaleStatus, zh: String, en: String) {
            #expect(ProductCell(product(status: status), locale: .zhHans).saleStatus == zh)
            #expect(ProductCell(product(status: status), locale: .en).saleStatus == en)
        }

        @Test(arguments: [(180, "180天", "180 days"), (1, "1天", "1 day"), (30, "30天", "30 days"), (0, "0天", "0 days")])
        func termInDays(days: Int, zh: String, en: String) {
            #expect(ProductCell(product(days: days), locale: .zhHans).term == zh)
            #expect(ProductCell(product(days: days), locale: .en).term == en)
        }

        @Test(arguments: [
            (50_000, "¥50,000"), (1_000, "¥1,000"), (999, "¥999"), (0, "¥0"), (1_234_567, "¥1,234,567"), (100_000, "¥100,000"),
        ])
        func amountHasThousandsSeparatorsInBothLocales(amount: Int, text: String) {
            #expect(ProductCell(product(amount: amount), locale: .zhHans).amount == text)
            #expect(ProductCell(product(amount: amount), locale: .en).amount == text)
        }

        @Test func everyDemoProductFormats() {
            for product in DemoCatalog.products {
                let cell = ProductCell(product, locale: .zhHans)
                #expect(cell.profit.hasSuffix("%") && cell.profit.split(separator: ".").last?.count == 3)
                #expect(["在售", "已售罄", "即将发售"].contains(cell.saleStatus))
                #expect(cell.term == "\(product.termDays)天")
                #expect(["¥50,000", "¥10,000", "¥1,000"].contains(cell.amount))
            }
        }
    }
}
