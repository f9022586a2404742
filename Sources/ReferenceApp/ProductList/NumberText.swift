/// Locale-free number writing for cells, without Foundation: the formats are fixed by the protocol,
/// not by the machine's locale settings.
enum NumberText {
    /// `value` rounded to two decimals: `4.35` → `"4.35"`, `3` → `"3.00"`, `-0.5` → `"-0.50"`.
    ///
    /// Total over every `Double`: a value whose hundredths do not fit in an `Int` (beyond about
    /// ±9.2e16, which a decoded product cannot hold: ``Product/annualRateRange``) is written as
    /// Swift writes the number (`"1e+17"`), and a non-finite one as `"0.00"`.
    static func twoDecimals(_ value: Double) -> String {
        guard value.isFinite else { return "0.00" }
        // Round in hundredths so 4.35 (stored as 4.34999…) reads as 4.35.
        guard let hundredths = Int(exactly: (value * 100).rounded()) else { return "\(value)" }
        let sign = hundredths < 0 ? "-" : ""
        let magnitude = hundredths.magnitude
        let fraction = magnitude % 100
        return "\(sign)\(magnitude / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    /// `value` with a comma between thousands: `50000` → `"50,000"`, `999` → `"999"`.
    static func grouped(_ value: Int) -> String {
        let digits = Array(String(value.magnitude))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return value < 0 ? "-" + text : text
    }
}
