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
        // Written backwards, byte by byte, then turned around: a cell writes two numbers, and a
        // page of cells a few hundred (string interpolation cost several times as much).
        return String(unsafeUninitializedCapacity: 24) { buffer in
            var magnitude = hundredths.magnitude
            var count = 0
            repeat {
                if count == 2 { buffer[count] = UInt8(ascii: "."); count += 1 }
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                count += 1
                magnitude /= 10
            } while magnitude > 0 || count < 4
            if hundredths < 0 { buffer[count] = UInt8(ascii: "-"); count += 1 }
            reverse(buffer, count)
            return count
        }
    }

    /// `value` with a comma between thousands: `50000` → `"50,000"`, `999` → `"999"`.
    static func grouped(_ value: Int) -> String {
        String(unsafeUninitializedCapacity: 32) { buffer in
            var magnitude = value.magnitude
            var count = 0
            var digits = 0
            repeat {
                if digits > 0 && digits % 3 == 0 { buffer[count] = UInt8(ascii: ","); count += 1 }
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                count += 1
                digits += 1
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { buffer[count] = UInt8(ascii: "-"); count += 1 }
            reverse(buffer, count)
            return count
        }
    }

    /// Turns the first `count` bytes of `buffer` around.
    private static func reverse(_ buffer: UnsafeMutableBufferPointer<UInt8>, _ count: Int) {
        var low = 0
        var high = count - 1
        while low < high {
            let byte = buffer[low]
            buffer[low] = buffer[high]
            buffer[high] = byte
            low += 1
            high -= 1
        }
    }
}
