import VMHostEventLoop
import Synchronization
import Testing

/// A system timer that fires while no input arrives must still reach the output: the loop runs its
/// drain hooks (the host's flush) after due timers, not only after jobs.
@Suite("Event loop", .timeLimit(.minutes(1)))
struct EventLoopTests {
    @Test func drainHooksRunAfterADueTimerFiresOnItsOwn() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            EventLoop.shared.execute {
                HostActor.assumeIsolated {
                    var fired = false
                    let hook = HookID()
                    hook.id = EventLoop.shared.addDrainHook {
                        guard fired else { return }
                        EventLoop.shared.removeDrainHook(hook.id)
                        done.resume()
                    }
                    // Already due: fires on the loop's next turn, with no job and no input behind it.
                    _ = EventLoop.shared.schedule(at: 0) { fired = true }
                }
            }
        }
    }
}

@HostActor
private final class HookID {
    var id = 0
}
