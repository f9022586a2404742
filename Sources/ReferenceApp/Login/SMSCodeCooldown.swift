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
///
/// With ``SharedCooldowns`` (the other processes serving the app at once, the workers of one
/// `vmhost-web`) each send is told to them as it is recorded, and each check reads theirs too: a
/// phone waits as long as the longest of its countdowns in any of them.
@HostActor
public final class SMSCodeCooldown {
    /// How long a phone waits between two codes.
    public let period: Duration
    /// The most phones remembered at once; a send beyond forgets the earliest one.
    public nonisolated static let maxPhones = 64
    /// The send time of the last code per (normalized) phone, on the host's clock.
    private var sentAt: [String: Duration] = [:]
    private let storage: (any CooldownStorage)?
    private let shared: (any SharedCooldowns)?
    private let clock: (any HostClock)?

    /// A cooldown kept in memory only.
    public init(period: Duration = .seconds(LoginViewModel.countdownSeconds)) {
        self.period = period
        storage = nil
        shared = nil
        clock = nil
    }

    /// A cooldown kept in `storage` too, on `clock`: the deadlines stored there are read at once.
    public convenience init(
        period: Duration = .seconds(LoginViewModel.countdownSeconds), storage: any CooldownStorage, clock: any HostClock
    ) {
        self.init(period: period, storage: storage, shared: nil, clock: clock)
    }

    /// A cooldown kept in `storage` (if any) between runs and shared with other processes through
    /// `shared` (if any), on `clock`: the deadlines stored are read at once, and told to `shared`.
    public init(
        period: Duration = .seconds(LoginViewModel.countdownSeconds), storage: (any CooldownStorage)?,
        shared: (any SharedCooldowns)?, clock: any HostClock
    ) {
        self.period = period
        self.storage = storage
        self.shared = shared
        self.clock = clock
        let now = clock.now
        let wallNow = clock.wallTime
        for (phone, deadline) in storage?.savedCooldowns() ?? [:] {
            let left = min(deadline - wallNow, period)
            guard left > .zero else { continue }
            sentAt[phone] = now + left - period
            shared?.keep(wallNow + left, for: phone)
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
        guard let clock else { return }
        // Host time → wall time, through the clock's reading of both now.
        let offset = clock.wallTime - clock.now
        shared?.keep(offset + now + period, for: phone)
        storage?.saveCooldowns(sentAt.mapValues { offset + $0 + period })
    }

    /// How long `phone` still waits at `now`; zero when a code may be sent.
    public func remaining(for phone: String, at now: Duration) -> Duration {
        var left = Duration.zero
        if let sent = sentAt[phone] { left = period - (now - sent) }
        if let shared, let clock, let deadline = shared.deadline(of: phone) {
            // Wall time → host time; a deadline more than a period away counts as one period.
            let offset = clock.wallTime - clock.now
            left = max(left, min(deadline - offset - now, period))
        }
        return left > .zero ? left : .zero
    }
}
