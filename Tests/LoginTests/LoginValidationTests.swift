@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
@testable import Login

/// One row of the validation table: a field, what was typed, and whether it is valid.
struct ValidationCase: Sendable, CustomTestStringConvertible {
    var input: String
    var text: String
    var valid: Bool
    var output: String { "\(input)Valid" }
    var testDescription: String { "\(input) \"\(text)\" → \(valid)" }
}

extension LoginSuites {
    /// Field validation, through the view-model's inputs and outputs, and `canSubmit` sent only on change.
    @Suite("Login: validation")
    @HostActor
    struct LoginValidationTests {
        nonisolated static let table: [ValidationCase] = [
            // username: a mainland mobile number, 1[3-9] then 9 digits.
            .init(input: "username", text: "13800138000", valid: true),
            .init(input: "username", text: "19912345678", valid: true),
            .init(input: "username", text: "12800138000", valid: false),  // second digit 2
            .init(input: "username", text: "23800138000", valid: false),  // does not start with 1
            .init(input: "username", text: "1380013800", valid: false),  // 10 digits
            .init(input: "username", text: "138001380001", valid: false),  // 12 digits
            .init(input: "username", text: "1380013800a", valid: false),
            // Typed as people type a phone number: normalized first (spaces, dashes, +86, full-width).
            .init(input: "username", text: " 13800138000", valid: true),
            .init(input: "username", text: "１３８００１３８０００", valid: true),  // full-width digits
            .init(input: "username", text: "138 0013 8000", valid: true),
            .init(input: "username", text: "+86 138-0013-8000", valid: true),
            .init(input: "username", text: "12 800138000", valid: false),  // still second digit 2
            .init(input: "username", text: "", valid: false),
            // password: at least 6 characters.
            .init(input: "password", text: "12345", valid: false),
            .init(input: "password", text: "123456", valid: true),
            .init(input: "password", text: "abc def", valid: true),
            .init(input: "password", text: "密码密码密码", valid: true),  // six characters
            .init(input: "password", text: "密码密码密", valid: false),
            .init(input: "password", text: "", valid: false),
            // phone: the same rule as username.
            .init(input: "phone", text: "13912345678", valid: true),
            .init(input: "phone", text: "15000000000", valid: true),
            .init(input: "phone", text: "11012345678", valid: false),
            .init(input: "phone", text: "+8613912345678", valid: true),
            .init(input: "phone", text: "8613912345678", valid: true),
            .init(input: "phone", text: "＋８６　１３９－１２３４－５６７８", valid: true),  // full-width, ideographic space
            .init(input: "phone", text: "139-1234-5678", valid: true),
            .init(input: "phone", text: "0086 13912345678", valid: false),  // only +86 or 86
            .init(input: "phone", text: "86139123456", valid: false),  // 86 then 9 digits: not a prefix
            .init(input: "phone", text: "139.1234.5678", valid: false),
            // code: exactly 6 ASCII digits.
            .init(input: "code", text: "123456", valid: true),
            .init(input: "code", text: "000000", valid: true),
            .init(input: "code", text: "12345", valid: false),
            .init(input: "code", text: "1234567", valid: false),
            .init(input: "code", text: "12345a", valid: false),
            .init(input: "code", text: "１２３４５６", valid: false),
            .init(input: "code", text: " 123456", valid: false),
        ]

        @Test(arguments: table)
        func aFieldsValidityIsItsOnlyOutput(row: ValidationCase) {
            let harness = LoginHarness()
            // Valid: one change (and a valid phone enables sending a code). Invalid: nothing, since
            // every field starts out invalid (empty).
            var expected = row.valid ? [changed(row.output, true)] : []
            if row.valid && row.input == "phone" { expected.append(changed("canSendCode", true)) }
            #expect(harness.send(row.input, .string(row.text)) == expected)
            #expect(harness.recorder.value(row.output) == .bool(row.valid))
        }

        @Test(arguments: table)
        func theRulesAgreeWithTheOutputs(row: ValidationCase) {
            let rule: (String) -> Bool =
                switch row.input {
                case "password": LoginValidation.isPassword
                case "code": LoginValidation.isSMSCode
                default: { LoginValidation.isMobileNumber(LoginValidation.normalizedMobileNumber($0)) }
                }
            #expect(rule(row.text) == row.valid)
        }

        @Test func canSubmitIsSentOnlyWhenItChanges() {
            let harness = LoginHarness()
            #expect(harness.send("username", "1380013") == [])
            #expect(harness.send("username", "13800138000") == [changed("usernameValid", true)])
            #expect(harness.send("password", "123") == [])
            #expect(harness.send("password", "123456") == [changed("passwordValid", true), changed("canSubmit", true)])
            // Still valid: neither validity nor canSubmit is sent again.
            #expect(harness.send("password", "1234567") == [])
            #expect(harness.send("username", "13900139000") == [])
            // The other mode's fields do not matter in password mode.
            #expect(harness.send("phone", "13912345678") == [changed("phoneValid", true), changed("canSendCode", true)])
            #expect(harness.send("code", "12") == [])
            #expect(harness.send("password", "12") == [changed("passwordValid", false), changed("canSubmit", false)])
            #expect(harness.send("username", "1") == [changed("usernameValid", false)])
            #expect(harness.send("password", "123456") == [changed("passwordValid", true)])
            #expect(harness.send("username", "13800138000") == [changed("usernameValid", true), changed("canSubmit", true)])
        }

        @Test func codeModeNeedsAValidPhoneAndCode() {
            let harness = LoginHarness(mode: .code)
            harness.fill([("username", Demo.account), ("password", Demo.password)])
            #expect(harness.recorder.value("canSubmit") == false)
            #expect(harness.send("code", "123456") == [changed("codeValid", true)])
            #expect(harness.send("phone", "13912345678") == [
                changed("phoneValid", true), changed("canSubmit", true), changed("canSendCode", true),
            ])
            #expect(harness.send("code", "12345") == [changed("codeValid", false), changed("canSubmit", false)])
        }

        @Test func valuesOfTheWrongTypeAreRefusedNamingTheValue() {
            let harness = LoginHarness()
            for input in ["username", "password", "phone", "code"] {
                #expect(
                    harness.recorder.send(input, 123456)
                        == .invalidValue(JSONDecodingError(path: "params.value", problem: "expected a string, got a number")))
            }
            #expect(harness.recorder.take() == [])
        }
    }
}
