import VMHostWire

/// A JSON-RPC error object, `{code, message, data?}`: what a method answers when it fails. An app
/// throws one from a test control (``invalidParams(_:)`` for params it refuses).
public struct RPCError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error code: -32602 (invalid params), or another of JSON-RPC's and protocol/SPEC.md's.
    public var code: Int
    /// What went wrong, for a developer reading the reply.
    public var message: String
    /// Structured detail, if any.
    public var data: JSON?

    /// The error `code` with `message` and `data`.
    public init(code: Int, message: String, data: JSON? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// The error object of the wire.
    package var json: JSON {
        var object: JSONObject = ["code": .int(Int64(code)), "message": .string(message)]
        if let data { object.append("data", data) }
        return .object(object)
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}

extension RPCError {
    // JSON-RPC 2.0
    package static let parseErrorCode = -32700
    package static let invalidRequestCode = -32600
    package static let methodNotFoundCode = -32601
    package static let invalidParamsCode = -32602
    package static let internalErrorCode = -32603
    // vmhost
    package static let requestCancelledCode = -32800
    package static let unknownViewModelCode = -32001
    package static let unknownMemberCode = -32002
    package static let inputDisabledCode = -32003
    package static let commandFailedCode = -32004
    package static let shuttingDownCode = -32005
    /// A connection's cap was reached (view-models, subscriptions, commands in flight).
    package static let limitReachedCode = -32006

    package static func parseError(_ detail: String) -> RPCError {
        RPCError(code: parseErrorCode, message: "Parse error: \(detail)")
    }
    package static func invalidRequest(_ detail: String) -> RPCError {
        RPCError(code: invalidRequestCode, message: "Invalid Request: \(detail)")
    }
    package static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: methodNotFoundCode, message: "Method not found: \(method)")
    }
    /// -32602: `detail` names the param and why (`params.kind: expected a string, got a number`).
    public static func invalidParams(_ detail: String) -> RPCError {
        RPCError(code: invalidParamsCode, message: "Invalid params: \(detail)")
    }
    package static func internalError(_ detail: String) -> RPCError {
        RPCError(code: internalErrorCode, message: "Internal error: \(detail)")
    }
    package static let requestCancelled = RPCError(code: requestCancelledCode, message: "Request cancelled")
    package static let shuttingDown = RPCError(code: shuttingDownCode, message: "The host is shutting down")

    /// The -32602 error for a decoding failure: `Invalid params: params.kind: expected a string, got a number`.
    package init(_ error: JSONDecodingError) {
        self = .invalidParams(error.description)
    }
}
