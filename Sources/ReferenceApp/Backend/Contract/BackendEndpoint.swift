/// The endpoints of the backend contract, named as `control.backend.script` names them.
public enum BackendEndpoint: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case products = "products"
    case authLogin = "auth.login"
    case authSMSCode = "auth.smsCode"
    case authLoginCode = "auth.loginCode"
    case groupsList = "groups.list"
    case groupsCreate = "groups.create"
    case groupsRename = "groups.rename"
    case groupsDelete = "groups.delete"

    /// Every endpoint name, in the order of the contract.
    public static let names: [String] = allCases.map(\.rawValue)

    /// The HTTP method the endpoint is called with.
    public var method: HTTPMethod {
        switch self {
        case .products, .groupsList: .get
        case .authLogin, .authSMSCode, .authLoginCode, .groupsCreate: .post
        case .groupsRename: .put
        case .groupsDelete: .delete
        }
    }

    public var description: String { rawValue }
}

/// The HTTP methods the contract uses.
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    case get = "GET"
    case post = "POST"
    case put = "PUT"
    case delete = "DELETE"
}
