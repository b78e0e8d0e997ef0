//! What the imported steps and their memberships say about each iteration
//! (docs/report.md §6.4 step 5): its membership state, its ownership (this run's
//! requests, other clients', both, or unresolved IDs), the cases of its run
//! members and whether it was shared.
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};

use foldhash::fast::RandomState;

use super::event::Ref;
use super::fact::Fact;

pub const OWN: &str = "run";
pub const FOREIGN: &str = "foreign";
pub const UNRESOLVED: &str = "unresolved";
pub const INCOMPLETE: &str = "incomplete";

/// A membership's ownership: its own `metadata.ownership` when a non-empty
/// string, else `run` for a request the client produced, else `unknown`.
pub fn ownership<'f>(membership: &'f Fact<'_>) -> &'f str {
    match &membership.label {
        Some(owner) => owner,
        None => {
            if membership.request.map(|r| r.producer) == Some("stormlog") {
                OWN
            } else {
                "unknown"
            }
        }
    }
}

pub struct Steps<'a, 'c> {
    /// The iterations the execution import wrote.
    pub iterations: HashMap<Ref<'a>, &'a Fact<'a>, RandomState>,
    /// Every resolved membership by its iteration.
    members: HashMap<Ref<'a>, Vec<&'a Fact<'a>>, RandomState>,
    /// The client's request IDs to their cases.
    cases_by_request: &'c HashMap<Cow<'c, str>, Cow<'c, str>, RandomState>,
}

impl<'a, 'c> Steps<'a, 'c> {
    pub fn new(
        iterations: HashMap<Ref<'a>, &'a Fact<'a>, RandomState>,
        memberships: &[&'a Fact<'a>],
        cases_by_request: &'c HashMap<Cow<'c, str>, Cow<'c, str>, RandomState>,
    ) -> Self {
        let mut members: HashMap<Ref<'a>, Vec<&'a Fact<'a>>, RandomState> = HashMap::default();
        for m in memberships
            .iter()
            .copied()
            .filter(|m| m.kind == super::event::Kind::Membership)
        {
            if let Some(it) = m.main {
                members.entry(it).or_default().push(m);
            }
        }
        Steps {
            iterations,
            members,
            cases_by_request,
        }
    }

    fn members(&self, iteration: &Ref<'a>) -> &[&'a Fact<'a>] {
        self.members.get(iteration).map_or(&[], Vec::as_slice)
    }

    /// `none` without the step or members, `incomplete`, else `complete`.
    pub fn membership_state(&self, iteration: &Ref<'a>) -> &'static str {
        match self.iterations.get(iteration) {
            Some(it) if !self.members(iteration).is_empty() => {
                if it.label.as_deref() == Some(INCOMPLETE) {
                    INCOMPLETE
                } else {
                    "complete"
                }
            }
            _ => "none",
        }
    }

    /// Established ownership only: `mixed` needs a run member and another
    /// client's; an unresolved member leaves the split unknown.
    pub fn ownership(&self, iteration: &Ref<'a>) -> &'static str {
        let (run, foreign, unresolved) = self.member_counts(iteration);
        if run != 0 && foreign != 0 {
            "mixed"
        } else if unresolved != 0 {
            UNRESOLVED
        } else if run != 0 {
            OWN
        } else if foreign != 0 {
            FOREIGN
        } else {
            "none"
        }
    }

    /// Run, foreign and unresolved members: the step's own counts when it
    /// has all three (they include members withheld for privacy), else its
    /// memberships counted.
    fn member_counts(&self, iteration: &Ref<'a>) -> (i64, i64, i64) {
        if let Some(counts) = self.iterations.get(iteration).and_then(|it| it.counts) {
            return counts;
        }
        let mut counts = (0, 0, 0);
        for m in self.members(iteration) {
            match ownership(m) {
                OWN => counts.0 += 1,
                FOREIGN => counts.1 += 1,
                UNRESOLVED => counts.2 += 1,
                _ => {}
            }
        }
        counts
    }

    /// The cases of the step's run members.
    pub fn cases(&self, iteration: &Ref<'a>) -> BTreeSet<&'c str> {
        self.members(iteration)
            .iter()
            .filter(|m| ownership(m) == OWN)
            .filter_map(|m| m.request)
            .filter_map(|r| self.cases_by_request.get(r.id).map(|c| c.as_ref()))
            .collect()
    }

    /// Shared with another case, or with anyone not established as this run.
    pub fn shared(&self, iteration: &Ref<'a>, cases: usize) -> bool {
        let (_, foreign, unresolved) = self.member_counts(iteration);
        cases > 1 || foreign > 0 || unresolved > 0
    }
}
