import VMHostRuntime
import VMHostWire

extension LoginViewModel {
    /// `sendCode`: posts the phone, then runs the countdown, which the app session remembers for that
    /// phone (``SMSCodeCooldown``). Disabled while the phone is invalid or a countdown runs; a failed
    /// send throws (→ `error`, -32004) and starts no countdown.
    func declareSendCode() -> Command<NoValue> {
        let sendCode = context.command("sendCode", policy: .ignore) { [unowned self, unowned context, api] in
            let phone = self.phone.value
            try await context.perform { try await api.sendSMSCode(phone: phone) }
            cooldown.recordSend(to: phone, at: context.clock.now)
            startCountdown()
            return nil
        }
        sendCode.disabledReason = { [unowned self] _ in
            if countdown.value > 0 { return Strings.Reason.countdownRunning(countdown.value) }
            if !phoneValid.value { return Strings.Reason.phoneInvalid }
            return nil
        }
        return sendCode
    }

    /// Sets ``countdown`` to 60 and ticks it down once a second on the host's clock, to 0.
    ///
    /// One timer at a time, re-armed each tick, so a manual clock advanced by any amount fires every
    /// tick in order, and disposing the view-model (which cancels its timers) stops it.
    func startCountdown() {
        startCountdown(left: .seconds(Self.countdownSeconds))
    }

    /// Resumes the countdown the app session keeps for the phone `number`, if one runs and this
    /// screen shows none (a `Login` opened again, or the phone typed again).
    func resumeCountdown(of number: String) {
        guard countdown.value == 0 else { return }
        let left = cooldown.remaining(for: number, at: context.clock.now)
        if left > .zero { startCountdown(left: left) }
    }

    /// Shows `left` rounded up to whole seconds; the first tick comes when the shown second is over.
    private func startCountdown(left: Duration) {
        if let countdownTimer { context.cancel(countdownTimer) }
        let (seconds, fraction) = left.components
        let whole = Int(seconds) + (fraction > 0 ? 1 : 0)
        countdown.value = whole
        armTick(after: left - .seconds(whole - 1))
    }

    private func armTick(after delay: Duration = .seconds(1)) {
        countdownTimer = context.schedule(after: delay) { [weak self] in
            guard let self else { return }
            countdownTimer = nil
            countdown.value -= 1
            if countdown.value > 0 { armTick() }
        }
    }
}
