import VMHostRuntime
import VMHostWire

extension LoginViewModel {
    /// `submit`: logs in with the current mode's credentials. Disabled (-32003) while ``canSubmit``
    /// is false. On success emits `navigate`; on failure shows the error's message in
    /// ``failureMessage`` and throws it (→ `error`, -32004). The API client keeps the token.
    func declareSubmit() -> Command<NoValue> {
        let submit = context.command("submit", policy: .ignore) { [unowned self] in
            try await logIn()
            return nil
        }
        submit.disabledReason = { [unowned self] _ in submitBlocker() }
        return submit
    }

    private func logIn() async throws {
        do {
            switch mode.value {
            case .password:
                let (username, password) = (self.username.value, self.password.value)
                _ = try await context.perform { [api] in try await api.login(username: username, password: password) }
            case .code:
                let (phone, code) = (self.phone.value, self.code.value)
                _ = try await context.perform { [api] in try await api.loginWithCode(phone: phone, code: code) }
            }
        } catch let error as DomainError {
            // A cancelled login shows nothing, even when its call failed on the way out.
            try Task.checkCancellation()
            failureMessage.value = error.message
            throw error
        }
        failureMessage.value = nil
        navigate.emit(.productList)
    }
}
