import Testing
@_spi(Transport) @testable import VMHostWire

/// Collects what a reader reports.
private struct Collected: Equatable {
    var frames: [String] = []
    var oversized: [Int?] = []
    var badHeaders = 0
    var detected: [Framing] = []
}

private func read(_ chunks: [[UInt8]], framing: Framing, limit: Int = 1024, finish: Bool = false) -> Collected {
    var reader = FrameReader(framing: framing, maxMessageBytes: limit)
    var collected = Collected()
    let handle: (FrameEvent) -> Void = { event in
        switch event {
        case .frame(let bytes): collected.frames.append(String(decoding: bytes, as: UTF8.self))
        case .oversized(let count, _): collected.oversized.append(count)
        case .badHeader: collected.badHeaders += 1
        case .framingDetected(let framing): collected.detected.append(framing)
        }
    }
    for chunk in chunks { chunk.withUnsafeBytes { reader.consume($0, handle) } }
    if finish { reader.finish(handle) }
    return collected
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
private func dripFed(_ text: String) -> [[UInt8]] { bytes(text).map { [$0] } }
private func lsp(_ body: String, extraHeaders: String = "") -> String {
    "Content-Length: \(body.utf8.count)\r\n\(extraHeaders)\r\n\(body)"
}

@Suite("Frame reader")
struct FrameReaderTests {
    static let stream = #"{"a":1}"# + "\n" + #"{"b":"x\ny"}"# + "\r\n\n   \n" + #"[1,2]"# + "\n"

    @Test func ndjsonSplitsLinesAndToleratesCRLFAndBlankLines() {
        let result = read([bytes(Self.stream)], framing: .ndjson)
        #expect(result.frames == [#"{"a":1}"#, #"{"b":"x\ny"}"#, "[1,2]"])
    }

    @Test func dripFeedingOneByteAtATimeGivesTheSameFrames() {
        #expect(read(dripFed(Self.stream), framing: .ndjson) == read([bytes(Self.stream)], framing: .ndjson))
        let lspStream = lsp(#"{"a":1}"#) + lsp("[2]", extraHeaders: "Content-Type: application/json\r\n")
        let whole = read([bytes(lspStream)], framing: .lsp)
        #expect(whole.frames == [#"{"a":1}"#, "[2]"])
        #expect(read(dripFed(lspStream), framing: .lsp) == whole)
    }

    @Test func everySplitPointGivesTheSameFrames() {
        let text = lsp(#"{"x":"é"}"#) + lsp("{}")
        let expected = read([bytes(text)], framing: .lsp)
        let all = bytes(text)
        for split in 0...all.count {
            #expect(read([Array(all[..<split]), Array(all[split...])], framing: .lsp) == expected)
        }
    }

    @Test func lspHeaderNamesAreCaseInsensitiveAndOthersIgnored() {
        let text = "content-LENGTH: 2\r\nX-Whatever: 1\r\n\r\n{}" + "Content-Type: a\r\nContent-Length:3\r\n\r\n[1]"
        #expect(read([bytes(text)], framing: .lsp).frames == ["{}", "[1]"])
    }

    @Test func lspMissingOrBadContentLengthIsReportedAndSkipped() {
        let text = "X-Other: 1\r\n\r\n" + "Content-Length: abc\r\n\r\n" + "Content-Length: -1\r\n\r\n" + lsp("{}")
        let result = read([bytes(text)], framing: .lsp)
        #expect(result.badHeaders == 3)
        #expect(result.frames == ["{}"])
    }

    @Test func autoDetectsFromTheFirstNonWhitespaceByte() {
        let ndjson = read([bytes("  \n{\"a\":1}\n")], framing: .auto)
        #expect(ndjson.detected == [.ndjson])
        #expect(ndjson.frames == [#"{"a":1}"#])
        let batch = read([bytes("[1]\n")], framing: .auto)
        #expect(batch.detected == [.ndjson])
        let headers = read([bytes(lsp("{}"))], framing: .auto)
        #expect(headers.detected == [.lsp])
        #expect(headers.frames == ["{}"])
    }

    @Test func theLargestLimitOverflowsNothing() {
        // --max-message-bytes accepts any Int from 64 on: no arithmetic on it may trap.
        for (framing, text) in [(Framing.ndjson, "{}\n{}"), (.lsp, lsp("[]")), (.auto, "{}\n{}")] {
            let result = read(dripFed(text), framing: framing, limit: Int.max, finish: true)
            #expect(result.frames.count == (framing == .lsp ? 1 : 2))
        }
    }

    @Test func autoSkipsAByteOrderMarkHoweverItArrives() {
        let text = "\u{FEFF}{\"a\":1}\n"
        for chunks in [[bytes(text)], dripFed(text)] {
            let result = read(chunks, framing: .auto)
            #expect(result.detected == [.ndjson])
            #expect(result.frames == [#"{"a":1}"#])
        }
        let headers = read(dripFed("\u{FEFF}" + lsp("{}")), framing: .auto)
        #expect(headers.detected == [.lsp])
        #expect(headers.frames == ["{}"])
        // Only at the start of the stream.
        #expect(read([bytes("{}\n\u{FEFF}{}\n")], framing: .ndjson).frames == ["{}", "\u{FEFF}{}"])
    }

    @Test func autoStartsLSPFramingOnlyOnAHeaderLine() {
        // Anything else is ndjson: a line that is not JSON is a frame (a parse error later), and
        // every line after it is read as ndjson too.
        for first in ["garbage", "nul", "Content-Length 2", ": x", "\u{7F}x: 1", "1"] {
            let result = read(dripFed(first + "\n{\"b\":2}\n"), framing: .auto)
            #expect(result.detected == [.ndjson], "\(first)")
            #expect(result.frames == [first, #"{"b":2}"#], "\(first)")
        }
        let typed = read(dripFed("Content-Type: application/json\r\n" + lsp("{}")), framing: .auto)
        #expect(typed.detected == [.lsp])
        #expect(typed.frames == ["{}"])
        // A name as long as a header block is no header, in one read or byte by byte.
        let long = String(repeating: "a", count: FrameReader.maxHeaderBytes) + ": 1\n"
        #expect(read([bytes(long)], framing: .auto, limit: 1 << 16).detected == [.ndjson])
        #expect(read(dripFed(long), framing: .auto, limit: 1 << 16).detected == [.ndjson])
        // A first line cut off by the end of input is ndjson too.
        let cut = read([bytes("garb")], framing: .auto, finish: true)
        #expect(cut.detected == [.ndjson])
        #expect(cut.frames == ["garb"])
    }

    @Test func framesAtTheLimitPassAndOneByteOverIsSkipped() {
        let limit = 16
        let atLimit = "{\"a\":\"" + String(repeating: "x", count: limit - 8) + "\"}"
        #expect(atLimit.utf8.count == limit)
        let over = "{\"a\":\"" + String(repeating: "x", count: limit - 7) + "\"}"
        let result = read([bytes(atLimit + "\n" + over + "\n" + "{}\n")], framing: .ndjson, limit: limit)
        #expect(result.frames == [atLimit, "{}"])
        #expect(result.oversized == [limit + 1])

        let lspResult = read([bytes(lsp(atLimit) + lsp(over) + lsp("{}"))], framing: .lsp, limit: limit)
        #expect(lspResult.frames == [atLimit, "{}"])
        #expect(lspResult.oversized == [limit + 1])
    }

    @Test func anOversizedLineIsNeverBufferedWhole() {
        var reader = FrameReader(framing: .ndjson, maxMessageBytes: 100)
        var oversized = 0
        var frames: [String] = []
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1000)
        for _ in 0..<100 {
            chunk.withUnsafeBytes { reader.consume($0) { if case .oversized = $0 { oversized += 1 } } }
            #expect(reader.bufferedByteCount <= 1000)
        }
        bytes("\n{}\n").withUnsafeBytes {
            reader.consume($0) { if case .frame(let b) = $0 { frames.append(String(decoding: b, as: UTF8.self)) } }
        }
        #expect(oversized == 1)
        #expect(frames == ["{}"])
    }

    @Test func anOversizedLSPBodyIsSkippedAsItStreams() {
        var reader = FrameReader(framing: .lsp, maxMessageBytes: 10)
        var events: [String] = []
        let handle: (FrameEvent) -> Void = { event in
            switch event {
            case .frame(let b): events.append(String(decoding: b, as: UTF8.self))
            case .oversized(let n, _): events.append("oversized \(n ?? -1)")
            default: break
            }
        }
        bytes("Content-Length: 5000\r\n\r\n").withUnsafeBytes { reader.consume($0, handle) }
        for _ in 0..<5 {
            [UInt8](repeating: 0x41, count: 1000).withUnsafeBytes { reader.consume($0, handle) }
            #expect(reader.bufferedByteCount == 0)
        }
        bytes(lsp("{}")).withUnsafeBytes { reader.consume($0, handle) }
        #expect(events == ["oversized 5000", "{}"])
    }

    @Test func aLastLineWithoutNewlineIsAFrameAtTheEnd() {
        #expect(read([bytes("{}\n[1]")], framing: .ndjson, finish: true).frames == ["{}", "[1]"])
        #expect(read([bytes("Content-Length: 9\r\n\r\n{}")], framing: .lsp, finish: true).badHeaders == 1)
    }

    @Test func framingWritesEachFrameWhole() {
        var out: [UInt8] = []
        Framing.lsp.frame(bytes("{}"), into: &out)
        Framing.ndjson.frame(bytes("[]"), into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "Content-Length: 2\r\n\r\n{}[]\n")
    }
}
