//! Resolving the correlation events into entities (docs/report.md §6.4 step 3):
//! one run, events de-duplicated by their identity, and one event per
//! request, iteration, stage, membership, activity and alignment, the
//! smaller event id kept. Two copies that disagree are an error of the block.
use std::collections::HashMap;

use foldhash::fast::RandomState;

use super::event::{Event, Kind, Ref};

/// Why the events do not resolve; the message is the block's `error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("correlation artifact contains multiple run_id values")]
    MultipleRuns,
    #[error("conflicting event identity")]
    ConflictingEvent,
    #[error("conflicting entity identity")]
    ConflictingEntity,
}

/// The resolved entities the block reads (stages and alignments are
/// resolved only for their conflicts).
#[derive(Debug, Default)]
pub struct Graph<'a> {
    pub requests: Vec<Event<'a>>,
    pub iterations: HashMap<Ref<'a>, Event<'a>, RandomState>,
    pub memberships: Vec<Event<'a>>,
    pub activities: Vec<Event<'a>>,
}

type Table<'a, K> = HashMap<K, Event<'a>, RandomState>;

/// Keeps one event per entity: an equal copy with a smaller event id
/// replaces the kept one; a different one is a conflict.
fn put<'a, K: std::hash::Hash + Eq>(
    table: &mut Table<'a, K>,
    key: K,
    event: Event<'a>,
) -> Result<(), ResolveError> {
    match table.entry(key) {
        std::collections::hash_map::Entry::Vacant(slot) => {
            slot.insert(event);
        }
        std::collections::hash_map::Entry::Occupied(mut slot) => {
            if !slot.get().same(&event, false) {
                return Err(ResolveError::ConflictingEntity);
            }
            if event.event_id < slot.get().event_id {
                slot.insert(event);
            }
        }
    }
    Ok(())
}

/// The alignment's entity key: who measured it and what it says.
type AlignmentKey<'a> = (
    (&'a str, &'a str, &'a str),
    Option<&'a str>,
    Option<&'a str>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
);

type MembershipKey<'a> = (Ref<'a>, Option<Ref<'a>>, Ref<'a>, &'a str);

pub fn resolve<'a>(events: &[Event<'a>]) -> Result<Graph<'a>, ResolveError> {
    // De-duplication by (session, producer, event id), in record order: the
    // first position is kept, with the last copy's content.
    let mut run_id: Option<&str> = None;
    let mut seen: HashMap<(&str, &str, &str), usize, RandomState> = HashMap::default();
    let mut unique: Vec<Event<'a>> = Vec::with_capacity(events.len());
    for event in events {
        let run = *run_id.get_or_insert(event.run_id());
        if event.run_id() != run {
            return Err(ResolveError::MultipleRuns);
        }
        match seen.entry(event.identity()) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(unique.len());
                unique.push(*event);
            }
            std::collections::hash_map::Entry::Occupied(slot) => {
                let at = *slot.get();
                if !unique[at].same(event, true) {
                    return Err(ResolveError::ConflictingEvent);
                }
                unique[at] = *event;
            }
        }
    }
    let mut requests: Table<(Ref, Option<Ref>)> = HashMap::default();
    let mut iterations: Table<Ref> = HashMap::default();
    let mut stages: Table<Ref> = HashMap::default();
    let mut memberships: Table<MembershipKey> = HashMap::default();
    let mut activities: Table<Ref> = HashMap::default();
    let mut alignments: Table<AlignmentKey> = HashMap::default();
    for event in unique {
        let r = |k: &str| event.reference(k);
        match event.kind {
            Kind::Request => {
                if let Some(req) = r("request_ref") {
                    put(&mut requests, (req, r("attempt_ref")), event)?;
                }
            }
            Kind::Iteration => {
                if let Some(it) = r("iteration_ref") {
                    put(&mut iterations, it, event)?;
                }
            }
            Kind::Stage => {
                if let Some(st) = r("stage_ref") {
                    put(&mut stages, st, event)?;
                }
            }
            Kind::Membership => {
                if let (Some(req), Some(it)) = (r("request_ref"), r("iteration_ref")) {
                    let role = event.field("role").as_str().unwrap_or("");
                    put(&mut memberships, (req, r("attempt_ref"), it, role), event)?;
                }
            }
            Kind::Activity => {
                if let Some(a) = r("activity_ref") {
                    put(&mut activities, a, event)?;
                }
            }
            Kind::Alignment => {
                let (session, producer, _) = event.identity();
                let key = (
                    (session, producer, ""),
                    event.field("from_clock_domain").as_str(),
                    event.field("to_clock_domain").as_str(),
                    event.int("offset_ns"),
                    event.int("uncertainty_ns"),
                    event.int("valid_from_ns"),
                    event.int("valid_to_ns"),
                );
                put(&mut alignments, key, event)?;
            }
            Kind::Artifact | Kind::Capability => {}
        }
    }
    Ok(Graph {
        requests: requests.into_values().collect(),
        iterations,
        memberships: memberships.into_values().collect(),
        activities: activities.into_values().collect(),
    })
}
