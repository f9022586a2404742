import VMHostEventLoop

/// When an SMS code was last sent to each phone, for the whole app session rather than one `Login`:
/// closing the login screen and opening it again does not allow an immediate resend to the same
/// phone. One instance is shared by every `Login` of a host (``LoginViewModel/factory(api:cooldown:)``);
/// times are on the host's clock.
@HostActor
public final class SMSCodeCooldown {
    /// How long a phone waits between two codes.
    public let period: Duration
    /// The send time of the last code per (normalized) phone, on the host's clock.
    private var sentAt: [String: Duration] = [:]

    public init(period: Duration = .seconds(LoginViewModel.countdownSeconds)) {
        self.period = period
    }

    /// A code was sent to `phone` at `now`.
    public func recordSend(to phone: String, at now: Duration) {
        // Drop the entries whose wait is over, so the table stays as small as the phones waiting.
        sentAt = sentAt.filter { now - $0.value < period }
        sentAt[phone] = now
    }

    /// How long `phone` still waits at `now`; zero when a code may be sent.
    public func remaining(for phone: String, at now: Duration) -> Duration {
        guard let sent = sentAt[phone] else { return .zero }
        let left = period - (now - sent)
        return left > .zero ? left : .zero
    }
}
