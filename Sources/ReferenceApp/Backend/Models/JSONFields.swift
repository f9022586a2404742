import VMHost

/// Reads the members of one JSON object, turning every missing or wrongly typed member into a
/// `decode` error that names the member (never its value, which may be a secret).
struct JSONFields {
    let object: JSONObject
    /// What the object is, for messages: "product", "data", "page".
    let context: String

    init(_ json: JSON, context: String) throws(BackendError) {
        guard case .object(let object) = json else {
            throw .decode("\(context): expected an object, got \(json.typeName)")
        }
        self.object = object
        self.context = context
    }

    /// The member `key`. `position`, where the server writes it, is looked at first: a page of
    /// products reads seven members of each of a hundred objects.
    func value(_ key: String, at position: Int? = nil) throws(BackendError) -> JSON {
        if let position, position < object.members.count, object.members[position].key == key { return object.members[position].value }
        guard let value = object[key] else { throw .decode("\(context).\(key) is missing") }
        return value
    }

    func string(_ key: String, at position: Int? = nil) throws(BackendError) -> String {
        let value = try value(key, at: position)
        guard let string = value.stringValue else { throw mismatch(key, expected: "a string", got: value) }
        return string
    }

    func int(_ key: String, at position: Int? = nil) throws(BackendError) -> Int {
        let value = try value(key, at: position)
        guard let number = value.intValue, let int = Int(exactly: number) else {
            throw mismatch(key, expected: "an integer", got: value)
        }
        return int
    }

    /// An integer of at least `minimum`; a smaller one is a `decode` error naming the member.
    func int(_ key: String, atLeast minimum: Int) throws(BackendError) -> Int {
        let int = try int(key)
        guard int >= minimum else { throw .decode("\(context).\(key): out of range (must be at least \(minimum))") }
        return int
    }

    func double(_ key: String, at position: Int? = nil) throws(BackendError) -> Double {
        let value = try value(key, at: position)
        guard let number = value.doubleValue else { throw mismatch(key, expected: "a number", got: value) }
        return number
    }

    /// A number within `range`; one outside is a `decode` error naming the member (not its value).
    func double(_ key: String, in range: ClosedRange<Double>, at position: Int? = nil) throws(BackendError) -> Double {
        let number = try double(key, at: position)
        guard range.contains(number) else {
            throw .decode("\(context).\(key): out of range (must be between \(range.lowerBound) and \(range.upperBound))")
        }
        return number
    }

    func bool(_ key: String) throws(BackendError) -> Bool {
        let value = try value(key)
        guard let bool = value.boolValue else { throw mismatch(key, expected: "a boolean", got: value) }
        return bool
    }

    private func mismatch(_ key: String, expected: String, got value: JSON) -> BackendError {
        .decode("\(context).\(key): expected \(expected), got \(value.typeName)")
    }
}

extension Array {
    /// Decodes every element of a JSON array, naming the failing index in the error.
    static func decoding(
        _ json: JSON, context: String, _ element: (JSON) throws(BackendError) -> Element
    ) throws(BackendError) -> [Element] {
        guard case .array(let values) = json else {
            throw .decode("\(context): expected an array, got \(json.typeName)")
        }
        var result: [Element] = []
        result.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            do {
                result.append(try element(value))
            } catch {
                throw .decode("\(context)[\(index)]: \(error.detail)")
            }
        }
        return result
    }
}
