/// Locale-free number writing for cells, without Foundation: the formats are fixed by the protocol,
/// not by the machine's locale settings.
///
/// Each text is written backwards, byte by byte, then turned around and made the one string it is:
/// a page of cells writes a few hundred numbers, and string interpolation or joining strings with
/// `+` cost several times as much.
enum NumberText {
    /// `value` rounded to two decimals, then `suffix`: `4.35` → `"4.35"`, `3` → `"3.00"`, `-0.5` →
    /// `"-0.50"`; `(4.35, suffix: "%")` → `"4.35%"`.
    ///
    /// Total over every `Double`: a value whose hundredths do not fit in an `Int` (beyond about
    /// ±9.2e16, which a decoded product cannot hold: ``Product/annualRateRange``) is written as
    /// Swift writes the number (`"1e+17"`), and a non-finite one as `"0.00"`.
    static func twoDecimals(_ value: Double, suffix: StaticString = "") -> String {
        guard value.isFinite else { return "0.00" + suffix.description }
        // Round in hundredths so 4.35 (stored as 4.34999…) reads as 4.35.
        guard let hundredths = Int(exactly: (value * 100).rounded()) else { return "\(value)" + suffix.description }
        return written(capacity: 24 + suffix.utf8CodeUnitCount) { buffer, count in
            appendReversed(suffix, to: buffer, &count)
            let start = count
            var magnitude = hundredths.magnitude
            repeat {
                if count - start == 2 { append(UInt8(ascii: "."), to: buffer, &count) }
                append(UInt8(ascii: "0") + UInt8(magnitude % 10), to: buffer, &count)
                magnitude /= 10
            } while magnitude > 0 || count - start < 4
            if hundredths < 0 { append(UInt8(ascii: "-"), to: buffer, &count) }
        }
    }

    /// `prefix`, then `value` with a comma between thousands: `50000` → `"50,000"`, `999` →
    /// `"999"`; `(50000, prefix: "¥")` → `"¥50,000"`.
    static func grouped(_ value: Int, prefix: StaticString = "") -> String {
        written(capacity: 32 + prefix.utf8CodeUnitCount) { buffer, count in
            var magnitude = value.magnitude
            var digits = 0
            repeat {
                if digits > 0 && digits % 3 == 0 { append(UInt8(ascii: ","), to: buffer, &count) }
                append(UInt8(ascii: "0") + UInt8(magnitude % 10), to: buffer, &count)
                digits += 1
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { append(UInt8(ascii: "-"), to: buffer, &count) }
            appendReversed(prefix, to: buffer, &count)
        }
    }

    /// `value` in decimal, then `suffix`: `(180, suffix: "天")` → `"180天"`.
    static func integer(_ value: Int, suffix: StaticString) -> String {
        written(capacity: 24 + suffix.utf8CodeUnitCount) { buffer, count in
            appendReversed(suffix, to: buffer, &count)
            var magnitude = value.magnitude
            repeat {
                append(UInt8(ascii: "0") + UInt8(magnitude % 10), to: buffer, &count)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { append(UInt8(ascii: "-"), to: buffer, &count) }
        }
    }

    /// A string of at most `capacity` bytes that `body` writes backwards. Written on the stack
    /// and made a string once: a short one (15 bytes or fewer, most) then needs no allocation.
    private static func written(capacity: Int, _ body: (UnsafeMutableBufferPointer<UInt8>, inout Int) -> Void) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            var count = 0
            body(buffer, &count)
            var low = 0
            var high = count - 1
            while low < high {
                let byte = buffer[low]
                buffer[low] = buffer[high]
                buffer[high] = byte
                low += 1
                high -= 1
            }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        }
    }

    private static func append(_ byte: UInt8, to buffer: UnsafeMutableBufferPointer<UInt8>, _ count: inout Int) {
        buffer[count] = byte
        count += 1
    }

    /// `text`'s bytes, last first.
    private static func appendReversed(_ text: StaticString, to buffer: UnsafeMutableBufferPointer<UInt8>, _ count: inout Int) {
        let bytes = text.utf8Start
        var index = text.utf8CodeUnitCount
        while index > 0 {
            index -= 1
            append(bytes[index], to: buffer, &count)
        }
    }
}
