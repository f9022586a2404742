import AppComposition
@_spi(Transport) import VMHost
@_spi(Transport) import VMHostWebSocket

/// What the workers of one vmhost-web share besides the state directory, in the memory their
/// supervisor shares with them (``WorkerLink/appRegion``): the SMS countdowns per phone, so that
/// a code sent through one worker holds back a resend through every other, and the device id an
/// HTTP backend is sent.
///
/// Layout: the device id (a length byte and up to 63 bytes), then ``slots`` countdowns of
/// ``slotBytes`` each: a key length byte (0: free), up to ``keyBytes`` bytes of the phone, and the
/// deadline at byte 40, milliseconds since the Unix epoch. Everything read is checked: a worker
/// killed while writing may leave a slot half-written, which then counts as free.
@HostActor
final class WorkerSharedState: ServerWideState {
    nonisolated static let slots = ReferenceApp.countdownPhones
    /// The longest phone kept: a valid one is 11 digits. A longer one is held back by the
    /// countdown of its own worker only (it was never sent a code: sending needs a valid phone).
    nonisolated static let keyBytes = 32
    nonisolated static let slotBytes = 48
    nonisolated static let deadlineOffset = 40
    nonisolated static let tableOffset = 64
    nonisolated static let regionBytes = tableOffset + slots * slotBytes

    private let region: SharedRegion

    init(region: SharedRegion) {
        self.region = region
    }

    func deviceID(orMake make: () -> String) -> String {
        let made = make()
        return region.withLock { data, _ -> String in
            let length = Int(data[0])
            if length > 0, length < Self.tableOffset,
                let kept = String(validating: UnsafeRawBufferPointer(rebasing: data[1..<(1 + length)]), as: UTF8.self)
            {
                return kept
            }
            let bytes = Array(made.utf8)
            guard bytes.count < Self.tableOffset else { return made }
            data[0] = UInt8(bytes.count)
            for (offset, byte) in bytes.enumerated() { data[1 + offset] = byte }
            return made
        } ?? made
    }

    func deadline(of phone: String) -> Duration? {
        let key = Array(phone.utf8)
        guard !key.isEmpty, key.count <= Self.keyBytes else { return nil }
        return region.withLock { data, _ -> Duration? in
            guard let slot = Self.slot(of: key, in: data) else { return nil }
            return .milliseconds(Self.deadline(at: slot, in: data))
        } ?? nil
    }

    func keep(_ deadline: Duration, for phone: String) {
        let key = Array(phone.utf8)
        guard !key.isEmpty, key.count <= Self.keyBytes else { return }
        let milliseconds = max(0, deadline.milliseconds)
        _ = region.withLock { data, _ in
            if let slot = Self.slot(of: key, in: data) {
                if Self.deadline(at: slot, in: data) < milliseconds { Self.write(milliseconds, key: key, at: slot, in: data) }
                return
            }
            // A free slot, else the earliest deadline's (a passed one is the earliest).
            var chosen = 0
            var earliest = Int64.max
            for slot in 0..<Self.slots {
                let length = Int(data[Self.offset(slot)])
                if length == 0 || length > Self.keyBytes {
                    chosen = slot
                    break
                }
                let at = Self.deadline(at: slot, in: data)
                if at < earliest {
                    earliest = at
                    chosen = slot
                }
            }
            Self.write(milliseconds, key: key, at: chosen, in: data)
        }
    }

    private static func offset(_ slot: Int) -> Int { tableOffset + slot * slotBytes }

    private static func slot(of key: [UInt8], in data: UnsafeMutableRawBufferPointer) -> Int? {
        for slot in 0..<slots {
            let start = offset(slot)
            guard Int(data[start]) == key.count else { continue }
            if key.indices.allSatisfy({ data[start + 1 + $0] == key[$0] }) { return slot }
        }
        return nil
    }

    /// A slot's deadline; a negative one (half-written) counts as passed long ago.
    private static func deadline(at slot: Int, in data: UnsafeMutableRawBufferPointer) -> Int64 {
        max(0, data.loadUnaligned(fromByteOffset: offset(slot) + deadlineOffset, as: Int64.self))
    }

    private static func write(_ milliseconds: Int64, key: [UInt8], at slot: Int, in data: UnsafeMutableRawBufferPointer) {
        let start = offset(slot)
        // The length last: a slot is whole once it names its phone.
        data[start] = 0
        for (index, byte) in key.enumerated() { data[start + 1 + index] = byte }
        data.storeBytes(of: milliseconds, toByteOffset: start + deadlineOffset, as: Int64.self)
        data[start] = UInt8(key.count)
    }
}
