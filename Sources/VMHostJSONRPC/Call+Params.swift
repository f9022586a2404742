import VMHostWire

extension Call {
    /// The params as an object reader; a params value that is not an object is -32602.
    public func reader() throws(RPCError) -> JSONReader {
        do throws(JSONDecodingError) { return try paramsReader() } catch { throw error.rpcError }
    }
}

extension JSONReader {
    /// A required member, or -32602 naming it.
    public func value<T: JSONDecodable>(_ key: String, as type: T.Type = T.self) throws(RPCError) -> T {
        do throws(JSONDecodingError) { return try required(key, as: type) } catch { throw error.rpcError }
    }

    /// An optional member, or -32602 naming it when present with the wrong type.
    public func optionalValue<T: JSONDecodable>(_ key: String, as type: T.Type = T.self) throws(RPCError) -> T? {
        do throws(JSONDecodingError) { return try optional(key, as: type) } catch { throw error.rpcError }
    }

    /// Runs a decoding step, turning its failure into -32602.
    public func decode<T>(_ body: (JSONReader) throws(JSONDecodingError) -> T) throws(RPCError) -> T {
        do throws(JSONDecodingError) { return try body(self) } catch { throw error.rpcError }
    }
}
