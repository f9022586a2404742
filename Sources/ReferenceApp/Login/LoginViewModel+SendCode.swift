import Backend
import VMHost

extension LoginViewModel {
    /// `sendCode`'s body: posts the phone, then runs the countdown, which the app session remembers
    /// for that phone (``SMSCodeCooldown``).
    func sendSMSCode() async throws {
        let number = phone
        try await api.sendSMSCode(phone: number)
        try Task.checkCancellation()
        cooldown.recordSend(to: number, at: context.clock.now)
        startCountdown(left: .seconds(Self.countdownSeconds))
    }

    /// Resumes the countdown the app session keeps for the phone `number`, if one runs and this
    /// screen shows none (a `Login` opened again, or the phone typed again).
    func resumeCountdown(of number: String) {
        guard countdown == 0 else { return }
        let left = cooldown.remaining(for: number, at: context.clock.now)
        if left > .zero { startCountdown(left: left) }
    }

    /// Shows `left` rounded up to whole seconds, and ticks it down once a second on the host's
    /// clock, to 0; the first tick comes when the shown second is over.
    ///
    /// One timer at a time, re-armed each tick, so a manual clock advanced by any amount fires every
    /// tick in order, and disposing the view-model (which cancels its timers) stops it.
    private func startCountdown(left: Duration) {
        if let countdownTimer { context.cancel(countdownTimer) }
        let (seconds, fraction) = left.components
        let whole = Int(seconds) + (fraction > 0 ? 1 : 0)
        countdown = whole
        armTick(after: left - .seconds(whole - 1))
    }

    private func armTick(after delay: Duration = .seconds(1)) {
        countdownTimer = schedule(after: delay) { vm in
            vm.countdownTimer = nil
            vm.countdown -= 1
            if vm.countdown > 0 { vm.armTick() }
        }
    }
}
