import VMHost

extension DemoServer {
    /// `POST /auth/login {username, password}`: the demo account only.
    mutating func login(_ body: JSON?) -> DemoResponse {
        guard let username = body?["username"]?.stringValue else { return Self.badRequest("username") }
        guard let password = body?["password"]?.stringValue else { return Self.badRequest("password") }
        guard username == DemoCatalog.username, password == DemoCatalog.password else {
            return .business(code: "1001", message: "用户名或密码错误")
        }
        return .ok(issueToken().json)
    }

    /// `POST /auth/sms-code {phone}`: accepted for any valid mainland mobile number.
    func sendSMSCode(_ body: JSON?) -> DemoResponse {
        guard let phone = body?["phone"]?.stringValue else { return Self.badRequest("phone") }
        guard Self.isMobileNumber(phone) else { return .business(code: "1002", message: "手机号格式不正确") }
        return .ok()
    }

    /// `POST /auth/login-code {phone, code}`: the code is the demo code whatever was sent before.
    mutating func loginWithCode(_ body: JSON?) -> DemoResponse {
        guard let phone = body?["phone"]?.stringValue else { return Self.badRequest("phone") }
        guard let code = body?["code"]?.stringValue else { return Self.badRequest("code") }
        guard Self.isMobileNumber(phone) else { return .business(code: "1002", message: "手机号格式不正确") }
        guard code == DemoCatalog.smsCode else { return .business(code: "1003", message: "验证码错误") }
        return .ok(issueToken().json)
    }

    /// A mainland mobile number: 11 ASCII digits, `1`, then `3`…`9`, then 9 digits.
    public static func isMobileNumber(_ text: String) -> Bool {
        let digits = Array(text.utf8)
        guard digits.count == 11, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return false }
        return digits[0] == 0x31 && (0x33...0x39).contains(digits[1])
    }

    /// `demo-token-1`, `demo-token-2`, … one per successful login.
    private mutating func issueToken() -> Session {
        tokensIssued += 1
        return Session(token: "demo-token-\(tokensIssued)")
    }
}
