//! [`PolicyEngine::read`]: one pass over a snapshot's bytes, on two threads.
//!
//! Reading the JSON is most of a load; compiling each policy and what the caller derives from it
//! (its [`PolicyVisitor`]) is the rest. The caller's thread reads and hands the policies over in
//! batches to a compiling thread, which compiles them, shows them to the visitor and gives each
//! batch back, to be freed on the reading thread where it was allocated (glibc frees another
//! thread's memory under the allocating arena's lock, which the reader keeps taking). At the end
//! the reading thread indexes the engine while the compiling thread finishes the visitor.
//!
//! The answer is the one compiling inline gives: the first policy the compiler refuses stops the
//! reader, and its refusal wins over anything the reader found after that policy.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use super::build::{compile_all, Building};
use super::{PolicyEngine, PolicyVisitor};
use crate::condition::Evaluators;
use crate::error::SnapshotError;
use crate::record::{Definition, PolicyRecord};
use crate::snapshot::{PolicyStream, Snapshot, SnapshotHead};

/// Policies go to the compiling thread this many at a time...
const BATCH: usize = 256;
/// ...with at most this many batches waiting, so the reader cannot run far ahead of it.
const BATCHES_IN_FLIGHT: usize = 16;

type Batch = Vec<(PolicyRecord, usize)>;

enum Work<'e, C: ?Sized> {
    /// The definition has been read: the policies that follow compile under it.
    Open(Box<Building<'e, C>>),
    Policies(Batch),
    /// The reader is done; whether the policies it handed over are the snapshot's (they are not
    /// when it had to read the snapshot again, whole).
    End {
        streamed: bool,
    },
}

/// What the compiling thread hands back when the reader is done.
struct Compiled<'e, C: ?Sized> {
    building: Option<Building<'e, C>>,
    refused: Option<SnapshotError>,
}

pub(super) fn read<C: ?Sized>(
    bytes: &[u8],
    evaluators: &Evaluators<C>,
    visitor: &mut dyn PolicyVisitor,
) -> Result<(SnapshotHead, PolicyEngine<C>), SnapshotError> {
    let refused = AtomicBool::new(false);
    let finished = std::thread::scope(|scope| {
        let (work, works) = mpsc::sync_channel::<Work<'_, C>>(BATCHES_IN_FLIGHT);
        let (give_back, given_back) = mpsc::channel::<Batch>();
        let (done, compiled) = mpsc::sync_channel::<Compiled<'_, C>>(1);
        let compiling_visitor = &mut *visitor;
        let compiling = std::thread::Builder::new()
            .name("grantforge-compile".to_string())
            .spawn_scoped(scope, || {
                compile(works, give_back, done, &refused, compiling_visitor);
            });
        if compiling.is_err() {
            return None;
        }
        let mut reading = Reading {
            evaluators,
            work,
            given_back,
            batch: Vec::with_capacity(BATCH),
            refused: &refused,
        };
        let read = crate::snapshot::stream(bytes, &mut reading);
        reading.send_batch();
        let streamed = matches!(read, Ok((_, true)));
        let _ = reading.work.send(Work::End { streamed });
        // Indexing here while the compiling thread finishes the visitor.
        let finished = settle(compiled.recv().ok(), read);
        drop(reading);
        if let Ok(Err(panic)) = compiling.map(|thread| thread.join()) {
            std::panic::resume_unwind(panic);
        }
        Some(finished)
    });
    match finished {
        Some(Ok(Finished::Compiled(compiled))) => Ok(*compiled),
        Some(Ok(Finished::Whole(snapshot))) => compile_whole(*snapshot, evaluators, visitor),
        Some(Err(refusal)) => Err(refusal),
        // No second thread: read the snapshot whole, then compile it, on this one.
        None => compile_whole(Snapshot::parse(bytes)?, evaluators, visitor),
    }
}

enum Finished<C: ?Sized> {
    Compiled(Box<(SnapshotHead, PolicyEngine<C>)>),
    /// The snapshot was read whole (a layout the reader could not hand over policy by policy).
    Whole(Box<Snapshot>),
}

/// What the reader and the compiling thread found, together: the compiler's refusal first (it
/// stopped the reader), then the reader's; a snapshot handed over policy by policy is indexed.
fn settle<'e, C: ?Sized>(
    compiled: Option<Compiled<'e, C>>,
    read: Result<(Snapshot, bool), SnapshotError>,
) -> Result<Finished<C>, SnapshotError> {
    let (building, refused) = compiled.map_or((None, None), |c| (c.building, c.refused));
    if let Some(refusal) = refused {
        return Err(refusal);
    }
    match read? {
        (snapshot, false) => Ok(Finished::Whole(Box::new(snapshot))),
        (Snapshot { head, .. }, true) => {
            // No building back: the compiling thread panicked, which joining it resumes.
            let building =
                building.ok_or_else(|| SnapshotError::new("", "the compiling thread stopped"))?;
            let engine = building.finish(&head.roles, &head.groups);
            Ok(Finished::Compiled(Box::new((head, engine))))
        }
    }
}

/// The compiling thread: compiles each batch of policies, shows them to the visitor and gives the
/// batch back; after the first refusal, only gives batches back.
fn compile<'e, C: ?Sized>(
    works: mpsc::Receiver<Work<'e, C>>,
    give_back: mpsc::Sender<Batch>,
    done: mpsc::SyncSender<Compiled<'e, C>>,
    refused: &AtomicBool,
    visitor: &mut dyn PolicyVisitor,
) {
    let mut compiled = Compiled {
        building: None,
        refused: None,
    };
    for work in works {
        match work {
            Work::Open(building) => compiled.building = Some(*building),
            Work::Policies(batch) => {
                if compiled.refused.is_none() {
                    let building = compiled
                        .building
                        .as_mut()
                        .expect("opened before any policy");
                    for (policy, index) in &batch {
                        if let Err(refusal) = building.add(policy, *index) {
                            compiled.refused = Some(refusal);
                            refused.store(true, Ordering::Relaxed);
                            break;
                        }
                        visitor.visit(policy);
                    }
                }
                let _ = give_back.send(batch);
            }
            Work::End { streamed } => {
                let finish = streamed && compiled.refused.is_none();
                let _ = done.send(compiled);
                if finish {
                    visitor.finish();
                }
                return;
            }
        }
    }
}

/// The reader's side: batches the policies for the compiling thread.
struct Reading<'r, 'e, C: ?Sized> {
    evaluators: &'e Evaluators<C>,
    work: mpsc::SyncSender<Work<'e, C>>,
    /// Batches compiled, to be freed here.
    given_back: mpsc::Receiver<Batch>,
    batch: Batch,
    refused: &'r AtomicBool,
}

impl<C: ?Sized> Reading<'_, '_, C> {
    fn send_batch(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        // The batches compiled are freed here, and a vector of them reused.
        let mut next = None;
        while let Ok(mut compiled) = self.given_back.try_recv() {
            compiled.clear();
            next = Some(compiled);
        }
        let next = next.unwrap_or_else(|| Vec::with_capacity(BATCH));
        let batch = std::mem::replace(&mut self.batch, next);
        // A compiling thread gone has panicked: joining it says so.
        let _ = self.work.send(Work::Policies(batch));
    }
}

impl<C: ?Sized> PolicyStream for Reading<'_, '_, C> {
    fn open(&mut self, definition: &Definition) -> Result<(), SnapshotError> {
        let building = Building::new(definition, self.evaluators)?;
        let _ = self.work.send(Work::Open(Box::new(building)));
        Ok(())
    }

    fn take(&mut self, policy: PolicyRecord, index: usize) -> Result<(), SnapshotError> {
        if self.refused.load(Ordering::Relaxed) {
            // Stops the reader; the compiler's refusal is the answer.
            return Err(SnapshotError::new("", "a policy was refused"));
        }
        self.batch.push((policy, index));
        if self.batch.len() >= BATCH {
            self.send_batch();
        }
        Ok(())
    }
}

/// Compiles the policies of a snapshot read whole: the visitor starts again from the first.
fn compile_whole<C: ?Sized>(
    snapshot: Snapshot,
    evaluators: &Evaluators<C>,
    visitor: &mut dyn PolicyVisitor,
) -> Result<(SnapshotHead, PolicyEngine<C>), SnapshotError> {
    visitor.restart();
    let engine = compile_all(&snapshot, evaluators, visitor)?;
    Ok((snapshot.head, engine))
}
