import Backend
import VMHost

extension LoginViewModel {
    /// `submit`'s body: logs in with the current mode's credentials. On failure shows the error's
    /// message in ``failureMessage`` and throws it (→ `error`, -32004). The API client keeps the token.
    func logIn() async throws {
        // A new attempt: the last one's failure no longer describes what is on screen.
        failureMessage = nil
        do {
            switch mode {
            case .password: _ = try await api.login(username: username, password: password)
            case .code: _ = try await api.loginWithCode(phone: phone, code: code)
            }
        } catch let error as BackendError {
            // A cancelled login shows nothing, even when its call failed on the way out.
            try Task.checkCancellation()
            failureMessage = error.message(in: context.locale)
            throw error
        }
        try Task.checkCancellation()
        loggedIn = true
        navigate.emit(.productList)
    }
}
