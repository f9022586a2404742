import VMHost

extension DemoCatalog {
    /// The names of the demo data in `locale`: a product's name, a bank or a group's name as the
    /// demo server sends it (Chinese, like the real server the contract describes), written in
    /// English for an English locale; any other name (a group the user created or renamed, a real
    /// server's data) is returned as it is.
    ///
    /// The view-models show backend names through it, so English mode shows English products,
    /// banks and groups with every backend that serves the demo data (the embedded one, the
    /// loopback server, a recording), while the wire to the backend stays the one contract.
    /// The rule is written in `protocol/backend.md` (Demo data, English names).
    ///
    /// - `安心盈2号` (series + number + `号`) → `Peace of Mind 2`;
    /// - `招商银行` → `CMB` (each bank's short English name);
    /// - `招牌热菜` → `Signature Hot Dishes` (the four groups of menu `m1`).
    public static func name(_ name: String, in locale: AppLocale) -> String {
        guard locale.language == "en" else { return name }
        if let english = englishNames[name] { return english }
        return englishProductName(name) ?? name
    }

    /// The English name of each series of ``series``, in the same order.
    static let englishSeries = ["Steady Growth", "Peace of Mind", "Daily Treasure", "Quarterly Red", "Monthly Share", "Yearly Harvest"]
    /// The short English name of each bank of ``banks``, in the same order.
    static let englishBanks = ["CMB", "ICBC", "CCB", "ABC", "BOC", "BoCom", "SPDB", "CIB"]
    /// The English names of the groups of ``groups``, in the same order.
    static let englishGroups = ["Signature Hot Dishes", "Cold Starters", "Staples & Dim Sum", "Drinks"]

    /// Banks and groups: Chinese name → English name.
    static let englishNames: [String: String] = {
        var names: [String: String] = [:]
        for (chinese, english) in zip(banks, englishBanks) { names[chinese] = english }
        for (group, english) in zip(groups, englishGroups) { names[group.name] = english }
        return names
    }()

    /// `安心盈2号` → `Peace of Mind 2`: a series, a decimal number, then `号`; nil for any other name.
    static func englishProductName(_ name: String) -> String? {
        guard name.hasSuffix("号") else { return nil }
        for (index, prefix) in series.enumerated() where name.hasPrefix(prefix) {
            let number = name.dropFirst(prefix.count).dropLast()
            guard !number.isEmpty, number.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return "\(englishSeries[index]) \(number)"
        }
        return nil
    }
}
