import VMHost

/// A wealth-management product of the product list.
///
/// On the wire: `{id, name, bank, annualRate, saleStatus, termDays, minAmount}`.
public struct Product: Sendable, Hashable, Identifiable {
    public var id: String
    public var name: String
    public var bank: String
    /// The annual rate in percent: `4.35` means 4.35 %. Decoded within ``annualRateRange``.
    public var annualRate: Double
    public var saleStatus: SaleStatus
    /// The investment term, in days.
    public var termDays: Int
    /// The minimum purchase, in whole yuan.
    public var minAmount: Int

    public init(
        id: String, name: String, bank: String, annualRate: Double, saleStatus: SaleStatus,
        termDays: Int, minAmount: Int
    ) {
        self.id = id
        self.name = name
        self.bank = bank
        self.annualRate = annualRate
        self.saleStatus = saleStatus
        self.termDays = termDays
        self.minAmount = minAmount
    }

    /// The annual rates a body may carry, in percent (backend.md, `Product`): any rate a cell can
    /// write with two decimals, with room to spare.
    public static let annualRateRange: ClosedRange<Double> = -1_000_000...1_000_000

    /// Decodes a product; a missing, wrongly typed or out-of-range member is a `decode` error
    /// naming it (never quoting the body's text).
    public init(json: JSON) throws(BackendError) {
        let fields = try JSONFields(json, context: "product")
        // The positions are those the server writes (``json``); a member elsewhere is still found.
        id = try fields.string("id", at: 0)
        name = try fields.string("name", at: 1)
        bank = try fields.string("bank", at: 2)
        annualRate = try fields.double("annualRate", in: Self.annualRateRange, at: 3)
        let status = try fields.string("saleStatus", at: 4)
        guard let saleStatus = SaleStatus(rawValue: status) else {
            throw .decode("product.saleStatus: expected one of \(SaleStatus.allCases.map(\.rawValue)), got another string")
        }
        self.saleStatus = saleStatus
        termDays = try fields.int("termDays", at: 5)
        minAmount = try fields.int("minAmount", at: 6)
    }

    /// The product as the server writes it.
    public var json: JSON {
        // The members as one array (a dictionary literal makes an array of pairs, then this one).
        .object(JSONObject(members: [
            .init(key: "id", value: .string(id)), .init(key: "name", value: .string(name)), .init(key: "bank", value: .string(bank)),
            .init(key: "annualRate", value: .double(annualRate)), .init(key: "saleStatus", value: .string(saleStatus.rawValue)),
            .init(key: "termDays", value: JSON(termDays)), .init(key: "minAmount", value: JSON(minAmount)),
        ]))
    }
}

/// Whether a product can be bought now.
public enum SaleStatus: String, Sendable, Hashable, CaseIterable, Codable {
    case onSale
    case soldOut
    case upcoming
}
