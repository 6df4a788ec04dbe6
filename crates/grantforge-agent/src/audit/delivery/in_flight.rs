//! The events a delivery holds only in memory: handed to the shipper, neither delivered nor
//! spooled yet. The closing thread may have to spool them itself (the agent's thread waiting on a
//! slow server past the close deadline, the process about to end), so they are shared with it, and
//! whichever thread spools a batch first is the only one that does.

use parking_lot::Mutex;
use serde_json::Value;

#[derive(Default)]
pub struct InFlight(Mutex<Held>);

#[derive(Default)]
struct Held {
    /// The delivery's events not yet let go, oldest first.
    events: Vec<Value>,
    /// The closing thread took them: the agent's thread spools none of them again.
    taken: bool,
}

impl InFlight {
    /// Holds a delivery's events until each batch of them is delivered or spooled.
    pub fn hold(&self, events: &[Value]) {
        *self.0.lock() = Held {
            events: events.to_vec(),
            taken: false,
        };
    }

    /// Lets the oldest `n` held events go, after running `keep` (spooling them), unless the
    /// closing thread took them first: it has spooled them, and spooling them again would count
    /// their accesses twice. A batch delivered after it took them is in the spool too; the server
    /// drops the resent copy by its event id.
    pub fn release(&self, n: usize, keep: impl FnOnce()) {
        let mut held = self.0.lock();
        if held.taken {
            return;
        }
        keep();
        let n = n.min(held.events.len());
        held.events.drain(..n);
    }

    /// Every event still held, for the caller to spool; the agent's thread spools none of them.
    pub fn take(&self) -> Vec<Value> {
        let mut held = self.0.lock();
        held.taken = true;
        std::mem::take(&mut held.events)
    }
}
