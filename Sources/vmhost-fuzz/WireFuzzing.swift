@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWire

/// The invariants of the wire, checked on one input (a stream of bytes as a client would write it).
///
/// The input is read by ``FrameReader`` in each framing (`auto`, `ndjson`, `lsp`) and under two
/// message limits (64 bytes, which inputs cross easily, and 4096), twice each: in one read, and in
/// reads of sizes taken from the input's own bytes (1 to 8 bytes, or up to 1 KiB). Then:
///
/// - both reads give the same events (frames byte for byte, skips, header problems): what the host
///   does never depends on how the pipe split the stream;
/// - no frame is longer than the limit; an ndjson frame holds no newline and is not blank;
/// - `auto` reports its decision once, first, and decides as SPEC §1 says;
/// - the bytes held for an unfinished message never exceed the limit (or the 8 KiB header limit);
/// - every frame that parses as JSON is written back by ``JSON/serialized()`` to text that parses
///   to the same value;
/// - the events go through the JSON-RPC engine (``EngineProbe``): see there;
/// - the input goes, as written by a client, through the C ABI of include/vmhost.h to a whole
///   host (``ABIProbe``): see there.
@HostActor
enum WireFuzzing {
    static let limits = [64, 4096]

    static func check(_ input: UnsafeRawBufferPointer) {
        let sizes = chunkSizes(input)
        for framing in Framing.allCases {
            for limit in limits {
                let whole = read(input, framing: framing, limit: limit, chunkSizes: [input.count])
                let pieces = read(input, framing: framing, limit: limit, chunkSizes: sizes)
                precondition(
                    whole.count == pieces.count && zip(whole, pieces).allSatisfy { $0.sameOutcome(as: $1) },
                    "framing \(framing), limit \(limit): one read gave \(whole), reads of \(sizes.prefix(20)) gave \(pieces)")
                validate(whole, framing: framing, limit: limit, input: input)
                EngineProbe(limit: limit).run(whole)
            }
        }
        ABIProbe.run(input, chunkSizes: sizes)
    }

    /// The sizes of the reads for the second pass, from the input's bytes: mostly tiny, some large.
    static func chunkSizes(_ input: UnsafeRawBufferPointer) -> [Int] {
        var sizes: [Int] = []
        var total = 0
        var index = 0
        while total < input.count {
            let byte = input[(index &* 131) % input.count]
            let size = byte < 160 ? 1 + Int(byte % 8) : 1 + Int(byte - 160) * 11
            sizes.append(size)
            total += size
            index += 1
        }
        return sizes
    }

    /// Reads `input` in reads of `chunkSizes`, then ends the stream; checks the buffer bound.
    static func read(_ input: UnsafeRawBufferPointer, framing: Framing, limit: Int, chunkSizes: [Int]) -> [ReadEvent] {
        var reader = FrameReader(framing: framing, maxMessageBytes: limit)
        var events: [ReadEvent] = []
        let bound = max(limit + 1, FrameReader.maxHeaderBytes)
        var offset = 0
        var sizes = chunkSizes.makeIterator()
        while offset < input.count {
            let size = min(sizes.next() ?? input.count, input.count - offset)
            reader.consume(UnsafeRawBufferPointer(rebasing: input[offset..<offset + size])) { events.append(ReadEvent($0)) }
            offset += size
            precondition(reader.bufferedByteCount <= bound,
                         "\(reader.bufferedByteCount) bytes held for an unfinished message (limit \(limit))")
        }
        reader.finish { events.append(ReadEvent($0)) }
        precondition(reader.bufferedByteCount == 0, "bytes held after the end of the stream")
        return events
    }

    static func validate(_ events: [ReadEvent], framing: Framing, limit: Int, input: UnsafeRawBufferPointer) {
        var effective = framing
        let (firstByte, expected) = autoDecision(input)
        for (index, event) in events.enumerated() {
            switch event {
            case .detected(let detected):
                precondition(framing == .auto && index == 0, "a framing decision that is not the first event of auto")
                precondition(detected == expected, "auto decided \(detected) on first byte \(String(describing: firstByte))")
                effective = detected
            case .frame(let bytes):
                precondition(effective != .auto, "a frame before the framing was decided")
                precondition(bytes.count <= limit, "a frame of \(bytes.count) bytes passed the limit of \(limit)")
                if effective == .ndjson {
                    precondition(!bytes.contains(UInt8(ascii: "\n")), "an ndjson frame holding a newline")
                    precondition(bytes.contains { !isWhitespace($0) }, "a blank ndjson frame")
                }
                checkRoundTrip(bytes)
            case .oversized(_, let reported):
                precondition(reported == limit, "an oversized frame reported against limit \(reported), not \(limit)")
            case .badHeader:
                precondition(effective == .lsp, "a header problem outside the lsp framing")
            }
        }
        if framing == .auto {
            precondition(firstByte == nil || events.first.map { if case .detected = $0 { true } else { false } } == true,
                         "auto never decided although the input has a non-blank byte")
        }
    }

    /// SPEC §1: after a leading byte order mark and whitespace, a first line that starts with a
    /// header name (letters, digits, `-`, `_`) and a colon is lsp; anything else is ndjson. Returns
    /// the first byte looked at (nil: nothing but whitespace, no decision) and the decision.
    static func autoDecision(_ input: UnsafeRawBufferPointer) -> (UInt8?, Framing) {
        var index = 0
        if input.count >= 3, input[0] == 0xEF, input[1] == 0xBB, input[2] == 0xBF { index = 3 }
        while index < input.count, isWhitespace(input[index]) { index += 1 }
        guard index < input.count else { return (nil, .ndjson) }
        var end = index
        while end < input.count, end - index < FrameReader.maxHeaderBytes, isHeaderNameByte(input[end]) { end += 1 }
        let tooLong = end - index >= FrameReader.maxHeaderBytes
        let header = !tooLong && end > index && end < input.count && input[end] == UInt8(ascii: ":")
        return (input[index], header ? .lsp : .ndjson)
    }

    static func isHeaderNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    static func checkRoundTrip(_ bytes: [UInt8]) {
        guard let parsed = try? JSON.parse(bytes) else { return }
        let text: [UInt8]
        do { text = try parsed.serializedOrThrow() } catch { preconditionFailure("a parsed value that cannot be written: \(error)") }
        guard let again = try? JSON.parse(text) else { preconditionFailure("written text that does not parse: \(text.count) bytes") }
        precondition(again == parsed, "a value that changed through writing and parsing")
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

/// What the reader reported, kept after the callback (frame bytes are copied).
enum ReadEvent: CustomStringConvertible {
    case detected(Framing)
    case frame([UInt8])
    case oversized(byteCount: Int?, limit: Int)
    case badHeader(String)

    init(_ event: FrameEvent) {
        switch event {
        case .framingDetected(let framing): self = .detected(framing)
        case .frame(let bytes): self = .frame(Array(bytes))
        case .oversized(let count, let limit): self = .oversized(byteCount: count, limit: limit)
        case .badHeader(let problem): self = .badHeader(problem)
        }
    }

    /// Equal, except for what may depend on the read sizes: how much of an oversized ndjson line
    /// had arrived when it was found too long (a count, or nil before its end was seen).
    func sameOutcome(as other: ReadEvent) -> Bool {
        switch (self, other) {
        case (.detected(let a), .detected(let b)): a == b
        case (.frame(let a), .frame(let b)): a == b
        case (.oversized(_, let a), .oversized(_, let b)): a == b
        case (.badHeader(let a), .badHeader(let b)): a == b
        default: false
        }
    }

    var description: String {
        switch self {
        case .detected(let framing): "detected(\(framing))"
        case .frame(let bytes): "frame(\(bytes.count) bytes)"
        case .oversized(let count, let limit): "oversized(\(count.map(String.init) ?? "?"), limit \(limit))"
        case .badHeader(let problem): "badHeader(\(problem))"
        }
    }
}
