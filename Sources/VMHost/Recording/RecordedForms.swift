#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostWire

/// The forms of the lines of a recording: what the client sent, what the host wrote, the app's lines.
extension SessionRecorder.State {
    // MARK: What the client sent

    /// A message the client sent, as a `send`: secrets as placeholders, subscription handles
    /// the host gave as `$ref:`, and strings that a replayer would substitute wrapped.
    mutating func sendForm(_ message: JSON) -> JSON {
        switch message {
        case .array(let elements):
            return .array(elements.map { element in
                if case .object = element { return sendForm(element) }
                return sent(element, member: nil)
            })
        case .object(let object):
            var result = JSONObject()
            let method = object["method"]?.stringValue
            for member in object {
                switch (method, member.key, member.value) {
                case ("vm.send", "params", .object(let params)):
                    result.append("params", .object(sendParams(params)))
                case ("vm.send", "params", let params):
                    // By position (an array), or no params at all (a string): the host
                    // refuses it, and the trace masks all of it; so does the recording.
                    result.append("params", secret(params, source: "params"))
                case ("vm.unsubscribe", "params", .object(var params)):
                    if case .string(let handle)? = params["subscription"], let name = captures[handle] {
                        params["subscription"] = .string("$ref:" + name)
                        result.append("params", sent(.object(params), member: nil, keeping: ["subscription"]))
                    } else {
                        result.append("params", sent(.object(params), member: nil))
                    }
                default:
                    result.append(member.key, sent(member.value, member: member.key))
                }
            }
            return .object(result)
        default:
            return sent(message, member: nil)
        }
    }

    /// The params of a `vm.send`, by the trace's rule (``Redaction/sendMember(_:_:of:)``, SPEC
    /// §8): what it shows is recorded, what it masks is a secret named after its source.
    private mutating func sendParams(_ params: JSONObject) -> JSONObject {
        var result = JSONObject()
        for member in params {
            switch redaction.sendMember(member.key, member.value, of: params) {
            case .shown: result.append(member.key, sent(member.value, member: member.key))
            case .secret(let source): result.append(member.key, secret(member.value, source: source))
            }
        }
        return result
    }

    /// Every string of `value` as a secret named after `source`.
    private mutating func secret(_ value: JSON, source: String) -> JSON {
        switch value {
        case .string(let text): return .string(redaction.placeholder(for: text, source: source, needed: true))
        case .array(let elements): return .array(elements.map { secret($0, source: source) })
        case .object(let object):
            var result = JSONObject()
            for member in object { result.append(member.key, secret(member.value, source: source)) }
            return .object(result)
        default: return value
        }
    }

    /// A value the client sent: secret members' strings and known secrets as placeholders,
    /// other strings escaped where a replayer would substitute them. `keeping` names members
    /// of this object already in their recorded form.
    private mutating func sent(_ value: JSON, member: String?, keeping: Set<String> = []) -> JSON {
        switch value {
        case .string(let text):
            if let member, redaction.secretMembers.contains(member) {
                return .string(redaction.placeholder(for: text, source: member, needed: true))
            }
            if let placeholder = redaction.knownPlaceholder(text, needed: true) { return .string(placeholder) }
            if text.hasPrefix("$ref:") || text.hasPrefix("$secret:") { return ["$literal": value] }
            return value
        case .array(let elements):
            return .array(elements.map { sent($0, member: nil) })
        case .object(let object):
            var result = JSONObject()
            for item in object {
                result.append(item.key, keeping.contains(item.key) ? item.value : sent(item.value, member: item.key))
            }
            if object.count == 1, object["$literal"] != nil { return ["$literal": .object(result)] }
            return .object(result)
        default:
            return value
        }
    }

    // MARK: What the host wrote

    /// A message the host wrote, as an `expect` pattern.
    mutating func expectForm(_ message: JSON) -> JSON {
        switch message {
        case .array(let elements):
            return .array(elements.map { expectForm($0) })
        case .object(let object):
            var result = JSONObject()
            let method = object["method"]?.stringValue
            for member in object {
                switch (member.key, member.value) {
                case ("result", .object(let value)) where object["id"] != nil:
                    result.append("result", resultForm(value))
                case ("params", .object(var params)) where method == "vm.changed" || method == "vm.event":
                    if case .string(let handle)? = params["subscription"], let name = captures[handle] {
                        params["subscription"] = .string("$ref:" + name)
                        result.append("params", expected(.object(params), member: nil, keeping: ["subscription"]))
                    } else {
                        result.append("params", expected(.object(params), member: nil))
                    }
                default:
                    result.append(member.key, expected(member.value, member: member.key))
                }
            }
            return .object(result)
        default:
            return expected(message, member: nil)
        }
    }

    /// A result: a subscription handle captured, the version and a kind's lists as `$any`.
    private mutating func resultForm(_ object: JSONObject) -> JSON {
        var object = object
        var keep: Set<String> = []
        if object.count == 2, case .string(let handle)? = object["subscription"], case .object? = object["values"] {
            let name = captures[handle] ?? Self.captureName(handle, count: captures.count)
            captures[handle] = name
            object["subscription"] = .string("$capture:" + name)
            keep.insert("subscription")
        }
        if case .object(var info)? = object["serverInfo"], info["version"] != nil {
            info["version"] = "$any"
            object["serverInfo"] = expected(.object(info), member: nil, keeping: ["version"])
            keep.insert("serverInfo")
        }
        if object["vm"] != nil, object["kind"] != nil, object["inputs"] != nil, object["outputs"] != nil {
            object["inputs"] = "$any"
            object["outputs"] = "$any"
            keep.formUnion(["inputs", "outputs"])
        }
        return expected(.object(object), member: nil, keeping: keep)
    }

    static func captureName(_ handle: String, count: Int) -> String {
        let usable = !handle.isEmpty && handle.utf8.count <= 64
            && handle.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || "_-.".unicodeScalars.contains($0)) }
        return usable ? handle : "subscription\(count + 1)"
    }

    /// A value the host wrote: the app's secret members' strings and known secrets as
    /// placeholders, a string holding a secret as `$any`, pattern-like values as literals.
    private mutating func expected(_ value: JSON, member: String?, keeping: Set<String> = []) -> JSON {
        switch value {
        case .string(let text):
            if let member, redaction.appSecretMembers.contains(member), !text.isEmpty {
                return .string(redaction.placeholder(for: text, source: member, needed: true))
            }
            if let placeholder = redaction.knownPlaceholder(text, needed: true) { return .string(placeholder) }
            if redaction.secretInside(text) != nil { return "$any" }
            if text == "$any" || text.hasPrefix("$capture:") || text.hasPrefix("$ref:") || text.hasPrefix("$secret:") {
                return ["$literal": value]
            }
            return value
        case .array(let elements):
            return .array(elements.map { expected($0, member: nil) })
        case .object(let object):
            var result = JSONObject()
            for item in object {
                result.append(item.key, keeping.contains(item.key) ? item.value : expected(item.value, member: item.key))
            }
            if object["..."] == .bool(true) || (object.count == 1 && object["$literal"] != nil) {
                return ["$literal": .object(result)]
            }
            return .object(result)
        default:
            return value
        }
    }

    // MARK: The app's lines

    /// An app's line: known secrets as placeholders, placeholders kept; a text holding a
    /// secret inside it is not kept: `"$secret:NAME:inside"` stands for it.
    mutating func appLineForm(_ value: JSON) -> JSON {
        switch value {
        case .string(let text):
            if text.hasPrefix("$secret:") { return value }
            if let placeholder = redaction.knownPlaceholder(text) { return .string(placeholder) }
            if let name = redaction.secretInside(text) { return .string("$secret:\(name):inside") }
            return value
        case .array(let elements):
            return .array(elements.map { appLineForm($0) })
        case .object(let object):
            var result = JSONObject()
            for member in object { result.append(member.key, appLineForm(member.value)) }
            return .object(result)
        default:
            return value
        }
    }
}
