import VMHostRuntime
import VMHostWire

extension LoginViewModel {
    /// `sendCode`: posts the phone, then runs the countdown. Disabled while the phone is invalid or a
    /// countdown runs; a failed send throws (→ `error`, -32004) and starts no countdown.
    func declareSendCode() -> Command<NoValue> {
        let sendCode = context.command("sendCode", policy: .ignore) { [unowned self, unowned context, api] in
            let phone = self.phone.value
            try await context.perform { try await api.sendSMSCode(phone: phone) }
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
        if let countdownTimer { context.cancel(countdownTimer) }
        countdown.value = Self.countdownSeconds
        armTick()
    }

    private func armTick() {
        countdownTimer = context.schedule(after: .seconds(1)) { [weak self] in
            guard let self else { return }
            countdownTimer = nil
            countdown.value -= 1
            if countdown.value > 0 { armTick() }
        }
    }
}
