@_spi(Transport) import VMHostEventLoop
import Foundation
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostWire

/// In-process micro-benchmarks of vmhost's JSON layer and JSON-RPC dispatch (scenario (g) of
/// `bench/run.py`), with no I/O:
///
/// - `json`: each message of ``Messages`` parsed and written again (and each half alone) through
///   the `Wire.JSON` type (jansson), Foundation's `JSONSerialization`, and Codable
///   (`JSONDecoder`/`JSONEncoder` over typed structs);
/// - `dispatch`: a frame handed to `RPCEngine.receive(frame:)` — parse, validate, look up the
///   method, run the handler, write the reply — for `ping` and for a `vm.send`-shaped request.
///
/// Timing: `ContinuousClock`; each figure is calibrated to a round of about `--round-ms`
/// milliseconds, then timed over `--rounds` rounds; the median round's ns per operation is
/// reported, with the fastest and slowest. Every output is checked once against its input before
/// it is timed. One JSON line per figure on stdout.
///
/// - with `--floods`, `dispatch` also of the largest messages a flooding client sends (a 4 MiB
///   batch of numbers, refused; the numbers as a notification's params).
///
///     vmhost-bench [--quick] [--rounds N] [--round-ms N] [--floods]
@main
struct Bench {
    static func main() async throws {
        var options = Options()
        var floods = false
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = arguments.next() {
            switch argument {
            case "--quick":
                options.rounds = 3
                options.roundTime = .milliseconds(10)
            case "--rounds":
                guard let value = arguments.next().flatMap(Int.init), value >= 1 else { usage("--rounds needs a number ≥ 1") }
                options.rounds = value
            case "--round-ms":
                guard let value = arguments.next().flatMap(Int.init), value >= 1 else { usage("--round-ms needs a number ≥ 1") }
                options.roundTime = .milliseconds(value)
            case "--floods":
                floods = true
            case "-h", "--help":
                print("usage: vmhost-bench [--quick] [--rounds N] [--round-ms N] [--floods]")
                return
            default:
                usage("unknown argument \(argument)")
            }
        }
        try JSONBenchmarks(options: options).run()
        try await DispatchBenchmarks(options: options).run()
        if floods { try await DispatchBenchmarks(options: options).runFloods() }
    }

    static func usage(_ problem: String) -> Never {
        FileHandle.standardError.write(Data("vmhost-bench: \(problem)\nusage: vmhost-bench [--quick] [--rounds N] [--round-ms N] [--floods]\n".utf8))
        exit(2)
    }
}

struct Options {
    var rounds = 7
    var roundTime: Duration = .milliseconds(40)
}

/// The median, fastest and slowest round of one figure, in ns per operation.
struct Timing {
    var median: Double
    var fastest: Double
    var slowest: Double
    var iterations: Int
    var rounds: Int

    var fields: [String: Any] {
        ["ns_per_op": round(median), "min_ns": round(fastest), "max_ns": round(slowest), "iterations": iterations, "rounds": rounds]
    }
}

/// Times `operation` (which returns a number derived from its result, so that it cannot be
/// optimised away): a calibration that doubles the count until a round takes at least half of
/// `roundTime` (this also warms up), then `rounds` rounds of the count that fills `roundTime`.
func measure(_ options: Options, _ operation: () throws -> Int) rethrows -> Timing {
    let clock = ContinuousClock()
    var sink = 0
    var count = 1
    while true {
        let start = clock.now
        for _ in 0..<count { sink &+= try operation() }
        let elapsed = clock.now - start
        if elapsed >= options.roundTime / 2 || count >= 1 << 30 {
            let perOp = nanoseconds(elapsed) / Double(count)
            count = max(1, Int(nanoseconds(options.roundTime) / max(perOp, 0.001)))
            break
        }
        count *= 2
    }
    var perOp: [Double] = []
    for _ in 0..<options.rounds {
        let start = clock.now
        for _ in 0..<count { sink &+= try operation() }
        perOp.append(nanoseconds(clock.now - start) / Double(count))
    }
    perOp.sort()
    if sink == 42 { FileHandle.standardError.write(Data(" ".utf8)) }  // keeps `sink` alive
    return Timing(
        median: perOp[perOp.count / 2], fastest: perOp[0], slowest: perOp[perOp.count - 1], iterations: count,
        rounds: options.rounds)
}

func nanoseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
}

/// Prints one JSON line, keys in a fixed order (first the ones given in `order`).
func emit(_ fields: [String: Any], order: [String]) {
    let rest = fields.keys.filter { !order.contains($0) }.sorted()
    var parts: [String] = []
    for key in order + rest {
        guard let value = fields[key] else { continue }
        let text: String
        switch value {
        case let string as String: text = String(decoding: JSON.string(string).serialized(), as: UTF8.self)
        case let double as Double: text = double == double.rounded() ? String(Int(double)) : String(double)
        default: text = "\(value)"
        }
        parts.append("\"\(key)\":\(text)")
    }
    FileHandle.standardOutput.write(Data(("{" + parts.joined(separator: ",") + "}\n").utf8))
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

// MARK: - JSON

struct JSONBenchmarks {
    let options: Options

    static let order = ["bench", "message", "bytes", "impl", "op", "ns_per_op", "min_ns", "max_ns", "iterations", "rounds"]

    func run() throws {
        let decoder = JSONDecoder()
        let encoder = JSONEncoder()
        for sample in Messages.all {
            let bytes = sample.bytes
            let data = Data(bytes)
            let name = sample.name

            // Wire.JSON over jansson: the host's own path.
            let wire = try JSON.parse(bytes)
            try check(name, "wire-jansson", wire.serializedOrThrow(), against: bytes)
            report(sample, "wire-jansson", "parse+write", try measure(options) {
                let value = try bytes.withUnsafeBytes { buffer throws(JSONParseError) in try JSON.parse(buffer) }
                return try value.serializedOrThrow().count
            })
            report(sample, "wire-jansson", "parse", try measure(options) {
                let value = try bytes.withUnsafeBytes { buffer throws(JSONParseError) in try JSON.parse(buffer) }
                return value.arrayValue?.count ?? 1
            })
            report(sample, "wire-jansson", "write", try measure(options) { try wire.serializedOrThrow().count })

            // Foundation's JSONSerialization: untyped, NSDictionary / NSArray / NSNumber.
            let object = try JSONSerialization.jsonObject(with: data)
            try check(name, "foundation-jsonserialization", Array(JSONSerialization.data(withJSONObject: object)), against: bytes)
            report(sample, "foundation-jsonserialization", "parse+write", try measure(options) {
                try JSONSerialization.data(withJSONObject: JSONSerialization.jsonObject(with: data)).count
            })
            report(sample, "foundation-jsonserialization", "parse", try measure(options) {
                (try JSONSerialization.jsonObject(with: data) as? NSDictionary)?.count ?? 0
            })
            report(sample, "foundation-jsonserialization", "write", try measure(options) {
                try JSONSerialization.data(withJSONObject: object).count
            })

            // Codable: typed structs through JSONDecoder / JSONEncoder.
            let codable = CodableMessages.codec(for: name)
            let decoded = try codable.decode(decoder, data)
            try check(name, "foundation-codable", Array(codable.encode(encoder, decoded)), against: bytes)
            report(sample, "foundation-codable", "parse+write", try measure(options) {
                try codable.encode(encoder, codable.decode(decoder, data)).count
            })
            report(sample, "foundation-codable", "parse", try measure(options) {
                _ = try codable.decode(decoder, data)
                return 1
            })
            report(sample, "foundation-codable", "write", try measure(options) { try codable.encode(encoder, decoded).count })
        }
    }

    func report(_ sample: Messages.Sample, _ impl: String, _ op: String, _ timing: Timing) {
        var fields = timing.fields
        fields["bench"] = "json"
        fields["message"] = sample.name
        fields["bytes"] = sample.bytes.count
        fields["impl"] = impl
        fields["op"] = op
        emit(fields, order: Self.order)
    }

    /// The text written must hold the same JSON as the message read (members in any order).
    func check(_ message: String, _ impl: String, _ written: [UInt8], against original: [UInt8]) throws {
        let a = try canonical(JSON.parse(written))
        let b = try canonical(JSON.parse(original))
        guard a == b else {
            throw BenchFailure(description: "\(impl) wrote \(message) differently:\n  \(a)\n  \(b)")
        }
    }

    /// The value with every object's members sorted by key, as text.
    func canonical(_ value: JSON) -> String {
        switch value {
        case .object(let object):
            let members = object.sorted { $0.key < $1.key }.map { JSON.string($0.key).description + ":" + canonical($0.value) }
            return "{" + members.joined(separator: ",") + "}"
        case .array(let elements):
            return "[" + elements.map(canonical).joined(separator: ",") + "]"
        default:
            return value.description
        }
    }
}

// MARK: - Dispatch

@HostActor
final class DispatchBenchmarks {
    let options: Options
    var written = 0
    var last: [UInt8] = []
    lazy var engine = RPCEngine { [unowned self] body in
        self.written &+= body.count
        self.last = body
    }

    static let order = ["bench", "request", "bytes", "ns_per_op", "min_ns", "max_ns", "iterations", "rounds"]

    nonisolated init(options: Options) {
        self.options = options
    }

    func run() throws {
        engine.registerSync("ping") { _ in [:] }
        engine.registerSync("vm.send") { call throws(RPCError) in
            guard let vm = call.params?["vm"]?.stringValue, call.params?["input"]?.stringValue != nil else {
                throw RPCError.invalidParams("params.vm: expected a string")
            }
            return vm.isEmpty ? .null : [:]
        }
        let requests = [
            ("ping", #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, #"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            ("vm.send", Messages.request.text, #"{"jsonrpc":"2.0","id":42,"result":{}}"#),
        ]
        for (name, request, reply) in requests {
            let frame = Array(request.utf8)
            receive(frame)
            guard last == Array(reply.utf8) else {
                throw BenchFailure(description: "\(name) was answered \(String(decoding: last, as: UTF8.self))")
            }
            measureReceiving(frame, name: name)
        }
    }

    /// Times `frame` received again and again, and writes the figures named `name`.
    func measureReceiving(_ frame: [UInt8], name: String) {
        let timing = measure(options) {
            receive(frame)
            return written
        }
        var fields = timing.fields
        fields["bench"] = "dispatch"
        fields["request"] = name
        fields["bytes"] = frame.count
        emit(fields, order: Self.order)
    }

    func receive(_ frame: [UInt8]) {
        frame.withUnsafeBytes { engine.receive(frame: $0) }
    }

    /// The largest messages a client may send (SPEC §10: 4 MiB) as a flood would (bench/RESULTS.md,
    /// "Fair turns"): what one costs the thread that handles it. A batch of 2,097,151 integers and
    /// one of 1,048,575 reals, each refused whole (-32600); the integers as the params of a
    /// notification of an unknown method (read whole, then ignored).
    func runFloods() throws {
        let integers = 2_097_151, reals = 1_048_575
        let floods = [
            ("batch of integers", "[" + String(repeating: "1,", count: integers - 1) + "1]", "holds \(integers);"),
            ("batch of reals", "[" + String(repeating: "1.5,", count: reals - 1) + "1.5]", "holds \(reals);"),
            ("params of integers", #"{"jsonrpc":"2.0","method":"flood","params":["# + String(repeating: "1,", count: integers - 1) + "1]}", nil),
        ]
        for (name, text, reply) in floods {
            let frame = Array(text.utf8)
            last = []
            receive(frame)
            let answered = String(decoding: last, as: UTF8.self)
            guard reply.map(answered.contains) ?? last.isEmpty else {
                throw BenchFailure(description: "\(name) was answered \(answered)")
            }
            measureReceiving(frame, name: name)
        }
    }
}
