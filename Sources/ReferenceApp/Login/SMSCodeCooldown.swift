import Backend
import VMHost

/// When an SMS code was last sent to each phone, for the whole app session rather than one `Login`:
/// closing the login screen and opening it again does not allow an immediate resend to the same
/// phone. One instance is shared by every `Login` of a host (``LoginViewModel/factory(api:cooldown:)``);
/// times are on the host's clock.
///
/// With a ``CooldownStorage`` (the host's `--state-dir`) a restart does not allow it either: each
/// send stores the phone's deadline in wall-clock time (``HostClock/wallTime``), and a new cooldown
/// reads the deadlines back, counting what is left of each from the clock's wall time then. A
/// deadline more than one ``period`` away (the wall clock was set back) counts as one period.
@HostActor
public final class SMSCodeCooldown {
    /// How long a phone waits between two codes.
    public let period: Duration
    /// The most phones remembered at once; a send beyond forgets the earliest one.
    public static let maxPhones = 64
    /// The send time of the last code per (normalized) phone, on the host's clock.
    private var sentAt: [String: Duration] = [:]
    private let storage: (any CooldownStorage)?
    private let clock: (any HostClock)?

    /// A cooldown kept in memory only.
    public init(period: Duration = .seconds(LoginViewModel.countdownSeconds)) {
        self.period = period
        storage = nil
        clock = nil
    }

    /// A cooldown kept in `storage` too, on `clock`: the deadlines stored there are read at once.
    public init(period: Duration = .seconds(LoginViewModel.countdownSeconds), storage: any CooldownStorage, clock: any HostClock) {
        self.period = period
        self.storage = storage
        self.clock = clock
        let now = clock.now
        let wallNow = clock.wallTime
        for (phone, deadline) in storage.savedCooldowns() {
            let left = min(deadline - wallNow, period)
            if left > .zero { sentAt[phone] = now + left - period }
        }
    }

    /// A code was sent to `phone` at `now`.
    public func recordSend(to phone: String, at now: Duration) {
        // Drop the entries whose wait is over, so the table stays as small as the phones waiting.
        sentAt = sentAt.filter { now - $0.value < period }
        if sentAt.count >= Self.maxPhones, let earliest = sentAt.min(by: { $0.value < $1.value }) {
            sentAt[earliest.key] = nil
        }
        sentAt[phone] = now
        guard let storage, let clock else { return }
        // Host time → wall time, through the clock's reading of both now.
        let offset = clock.wallTime - clock.now
        storage.saveCooldowns(sentAt.mapValues { offset + $0 + period })
    }

    /// How long `phone` still waits at `now`; zero when a code may be sent.
    public func remaining(for phone: String, at now: Duration) -> Duration {
        guard let sent = sentAt[phone] else { return .zero }
        let left = period - (now - sent)
        return left > .zero ? left : .zero
    }
}
