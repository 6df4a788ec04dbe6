//! The topic sink's hand-over to the Java shim's producer: Rust never calls Java, so the agent's
//! thread offers one batch of formatted records at a time and waits, for at most the sink's
//! timeout, for a daemon thread of the shim to take it, write it and say what was written. What is
//! not acknowledged as written by then is not written as far as the agent knows: it is spooled and
//! sent again (records carry the event's id, so a reader can drop a duplicate).

use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// One batch for the producer: records as (key, value), the key the event's user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicBatch {
    pub id: u64,
    pub records: Vec<(String, String)>,
}

/// What the producer did with a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Written {
    /// Every record was written (acknowledged by the cluster).
    All,
    /// Not written now (the topic cannot be written, the cluster is away, the time ran out):
    /// sent again later.
    NotNow(String),
    /// Kafka refuses a record of it for good (too large, invalid): sent again in halves, and
    /// the record it refuses dropped and counted.
    Refused(String),
}

/// How long a batch may wait to be taken: the shim's writer thread waits for batches in turns
/// shorter than this (`AuditTopicWriter.TAKE_WAIT_MS`), so a batch not taken by then has no
/// writer, and the agent's thread does not wait the whole timeout for it.
const TAKE_GRACE: Duration = Duration::from_secs(2);

#[derive(Default)]
struct Slot {
    next_id: u64,
    offered: Option<TopicBatch>,
    /// The batch the producer took and has not acknowledged.
    taken: Option<u64>,
    acked: Option<(u64, Written)>,
    closed: bool,
}

/// The rendezvous of the agent's thread and the shim's producer thread.
#[derive(Default)]
pub struct TopicChannel {
    slot: Mutex<Slot>,
    changed: Condvar,
}

impl TopicChannel {
    /// The agent's thread: offers `records` and waits up to `timeout` for the producer's word.
    pub fn offer(&self, records: Vec<(String, String)>, timeout: Duration) -> Written {
        let deadline = Instant::now() + timeout;
        let taken_by = Instant::now() + timeout.min(TAKE_GRACE);
        let mut slot = self.slot.lock();
        if slot.closed {
            return Written::NotNow("the agent is closing".into());
        }
        slot.next_id += 1;
        let id = slot.next_id;
        slot.offered = Some(TopicBatch { id, records });
        slot.acked = None;
        self.changed.notify_all();
        loop {
            if let Some((acked, written)) = slot.acked.take() {
                if acked == id {
                    return written;
                }
            }
            let taken = slot.taken == Some(id);
            let until = if taken { deadline } else { taken_by };
            if slot.closed || self.changed.wait_until(&mut slot, until).timed_out() {
                if slot.acked.as_ref().is_some_and(|(acked, _)| *acked == id) {
                    continue; // the word came as the time ran out
                }
                let taken = slot.taken == Some(id);
                if taken && !slot.closed && Instant::now() < deadline {
                    continue; // taken meanwhile: its writer has until the deadline
                }
                // Whatever happens to it now is not waited for: a late word is ignored.
                slot.offered = None;
                slot.taken = None;
                return Written::NotNow(if taken {
                    format!(
                        "the producer did not finish within {} ms",
                        timeout.as_millis()
                    )
                } else {
                    "no producer took the batch (the shim's writer thread is not running)".into()
                });
            }
        }
    }

    /// The producer's thread: the batch on offer, waiting up to `wait` for one; `None` when none
    /// came or the agent is closing.
    pub fn take(&self, wait: Duration) -> Option<TopicBatch> {
        let deadline = Instant::now() + wait;
        let mut slot = self.slot.lock();
        loop {
            if slot.closed {
                return None;
            }
            if let Some(batch) = slot.offered.take() {
                slot.taken = Some(batch.id);
                return Some(batch);
            }
            if self.changed.wait_until(&mut slot, deadline).timed_out() {
                return None;
            }
        }
    }

    /// The producer's thread: what became of batch `id`.
    pub fn ack(&self, id: u64, written: Written) {
        let mut slot = self.slot.lock();
        if slot.taken == Some(id) {
            slot.taken = None;
            slot.acked = Some((id, written));
            self.changed.notify_all();
        }
    }

    /// Whether the agent closed it: the producer stops.
    pub fn is_closed(&self) -> bool {
        self.slot.lock().closed
    }

    /// The agent closes: nothing more is offered or taken.
    pub fn close(&self) {
        self.slot.lock().closed = true;
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const LONG: Duration = Duration::from_secs(10);

    fn records() -> Vec<(String, String)> {
        vec![("alice".into(), "{}".into())]
    }

    #[test]
    fn a_batch_taken_and_acknowledged_is_written() {
        let channel = Arc::new(TopicChannel::default());
        let producer = Arc::clone(&channel);
        let writer = std::thread::spawn(move || {
            let batch = producer.take(LONG).unwrap();
            assert_eq!(batch.records, records());
            producer.ack(batch.id, Written::All);
        });
        assert_eq!(channel.offer(records(), LONG), Written::All);
        writer.join().unwrap();
    }

    #[test]
    fn without_a_word_in_time_the_batch_is_not_written_and_a_late_word_is_ignored() {
        let channel = TopicChannel::default();
        let short = Duration::from_millis(20);
        let not_taken = channel.offer(records(), short);
        assert!(matches!(not_taken, Written::NotNow(ref why) if why.contains("no producer")));
        assert_eq!(
            channel.take(short),
            None,
            "an abandoned batch is not taken later"
        );
        let channel = Arc::new(TopicChannel::default());
        let producer = Arc::clone(&channel);
        let slow = std::thread::spawn(move || {
            let batch = producer.take(LONG).unwrap();
            std::thread::sleep(Duration::from_millis(100));
            producer.ack(batch.id, Written::All);
        });
        let late = channel.offer(records(), Duration::from_millis(30));
        assert!(matches!(late, Written::NotNow(ref why) if why.contains("did not finish")));
        slow.join().unwrap();
        assert_eq!(channel.slot.lock().acked, None, "the late word is ignored");
    }

    #[test]
    fn a_batch_nobody_takes_is_given_up_before_the_timeout() {
        let channel = TopicChannel::default();
        let started = Instant::now();
        assert!(matches!(channel.offer(records(), LONG), Written::NotNow(_)));
        assert!(started.elapsed() < LONG / 2, "{:?}", started.elapsed());
    }

    #[test]
    fn a_closed_channel_takes_and_offers_nothing() {
        let channel = TopicChannel::default();
        channel.close();
        assert_eq!(channel.take(LONG), None);
        assert!(matches!(channel.offer(records(), LONG), Written::NotNow(_)));
    }
}
