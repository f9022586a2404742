import VMHostWire

/// A JSON-RPC error object: `{code, message, data?}`.
public struct RPCError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Int
    public var message: String
    public var data: JSON?

    public init(code: Int, message: String, data: JSON? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public var json: JSON {
        var object: JSONObject = ["code": .int(Int64(code)), "message": .string(message)]
        if let data { object.append("data", data) }
        return .object(object)
    }

    public var description: String { "\(code): \(message)" }
}

extension RPCError {
    // JSON-RPC 2.0
    public static let parseErrorCode = -32700
    public static let invalidRequestCode = -32600
    public static let methodNotFoundCode = -32601
    public static let invalidParamsCode = -32602
    public static let internalErrorCode = -32603
    // vmhost
    public static let requestCancelledCode = -32800
    public static let unknownViewModelCode = -32001
    public static let unknownMemberCode = -32002
    public static let inputDisabledCode = -32003
    public static let commandFailedCode = -32004
    public static let shuttingDownCode = -32005
    /// A connection's cap was reached (view-models, subscriptions, commands in flight).
    public static let limitReachedCode = -32006

    public static func parseError(_ detail: String) -> RPCError {
        RPCError(code: parseErrorCode, message: "Parse error: \(detail)")
    }
    public static func invalidRequest(_ detail: String) -> RPCError {
        RPCError(code: invalidRequestCode, message: "Invalid Request: \(detail)")
    }
    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: methodNotFoundCode, message: "Method not found: \(method)")
    }
    /// `detail` names the param and why: `params.kind: expected a string, got a number`.
    public static func invalidParams(_ detail: String) -> RPCError {
        RPCError(code: invalidParamsCode, message: "Invalid params: \(detail)")
    }
    public static func internalError(_ detail: String) -> RPCError {
        RPCError(code: internalErrorCode, message: "Internal error: \(detail)")
    }
    public static let requestCancelled = RPCError(code: requestCancelledCode, message: "Request cancelled")
    public static let shuttingDown = RPCError(code: shuttingDownCode, message: "The host is shutting down")
}

extension JSONDecodingError {
    /// The -32602 error for this decoding failure.
    public var rpcError: RPCError { .invalidParams(description) }
}
