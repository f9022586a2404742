import Backend
import VMHostRuntime
import Testing
@_spi(Transport) import VMHostWire

@Suite struct ModelTests {
    static let product = Product(
        id: "p001", name: "稳健增利1号", bank: "招商银行", annualRate: 4.35, saleStatus: .onSale, termDays: 90,
        minAmount: 50000)

    @Test func modelsRoundTripThroughJSON() throws {
        #expect(try Product(json: Self.product.json) == Self.product)
        let group = MenuGroup(id: "g1", name: "招牌热菜", dishCount: 12)
        #expect(try MenuGroup(json: group.json) == group)
        #expect(try Session(json: Session(token: "t").json) == Session(token: "t"))
        let info = PageInfo(index: 3, size: 20, total: 57)
        #expect(try PageInfo(json: info.json) == info)
        // Through the serialized text too, as the HTTP path goes.
        #expect(try Product(json: JSON.parse(Self.product.json.serialized())) == Self.product)
    }

    /// Members are looked for where the server writes them first: written in any other order (or
    /// with others between), a product reads the same.
    @Test func aProductReadsWhateverTheOrderOfItsMembers() throws {
        guard case .object(let object) = Self.product.json else {
            Issue.record("a product's JSON is not an object")
            return
        }
        let reversed = JSON.object(JSONObject(members: [.init(key: "extra", value: 1)] + object.members.reversed()))
        #expect(try Product(json: reversed) == Self.product)
    }

    @Test func pageInfoKnowsWhetherMoreFollows() {
        #expect(PageInfo(index: 2, size: 20, total: 57).hasMore)
        #expect(!PageInfo(index: 3, size: 20, total: 57).hasMore)
        #expect(!PageInfo(index: 1, size: 20, total: 20).hasMore)
        #expect(!PageInfo(index: 1, size: 20, total: 0).hasMore)
    }

    @Test func aWrongMemberIsADecodeErrorNamingIt() {
        var json = Self.product.json
        if case .object(var object) = json {
            object["annualRate"] = "4.35"
            json = .object(object)
        }
        #expect(throws: BackendError.decode("product.annualRate: expected a number, got a string")) {
            try Product(json: json)
        }
        #expect(throws: BackendError.decode("group.dishCount is missing")) {
            try MenuGroup(json: ["id": "g1", "name": "x"])
        }
        #expect(throws: BackendError.decode("session: expected an object, got an array")) { try Session(json: []) }
    }

    @Test func anUnknownSaleStatusIsADecodeError() {
        var json = Self.product.json
        if case .object(var object) = json {
            object["saleStatus"] = "gone"
            json = .object(object)
        }
        let error = #expect(throws: BackendError.self) { try Product(json: json) }
        #expect(error?.kind == .decode)
        #expect(error?.detail.contains("saleStatus") == true)
    }

    @Test func theSessionHidesItsTokenWhenPrinted() {
        #expect(!String(describing: Session(token: "secret-token")).contains("secret-token"))
    }

    /// A code is a string or an integer, read as its decimal text; a number with a fraction or an
    /// exponent is refused even when its value is whole (protocol/backend.md, "The envelope").
    @Test func aNumericCodeIsAnIntegerReadAsItsDecimalText() throws {
        for (text, code, success) in [
            (#"{"code": 1001, "msg": "no"}"#, "1001", false), (#"{"code": 0}"#, "0", true),
            (#"{"code": -1}"#, "-1", false), (#"{"success": false, "code": 7}"#, "7", false),
        ] {
            let envelope = try Envelope(json: try JSON.parse(Array(text.utf8)))
            #expect(envelope.code == code)
            #expect(envelope.success == success)
        }
        for text in [#"{"code": 1e3}"#, #"{"code": 0.0}"#, #"{"code": 1001.5}"#, #"{"success": false, "code": 1E3}"#] {
            let error = #expect(throws: BackendError.self) { try Envelope(json: try JSON.parse(Array(text.utf8))) }
            #expect(error?.kind == .decode)
            #expect(error?.detail == "envelope.code: expected a string or an integer, got a number with a fraction or an exponent")
        }
        let boolean = #expect(throws: BackendError.self) { try Envelope(json: ["code": true]) }
        #expect(boolean?.detail == "envelope.code: expected a string or an integer, got a boolean")
    }

    @Test func envelopeRoundTrips() throws {
        let envelope = Envelope.ok(["a": 1], page: PageInfo(index: 1, size: 20, total: 57))
        #expect(try Envelope(json: envelope.json) == envelope)
        #expect(envelope.json["code"] == "0")
    }
}
