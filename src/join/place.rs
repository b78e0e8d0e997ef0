//! The join decision for loaded samples: de-duplication, membership (one
//! server or one complete declared group), per-member placement on the client
//! clock, the joined report's membership and clock fields, invalidation, each
//! member's timeline, and `server_targets` (docs/server-join.md §2.1, §3, §4, §6.4,
//! §7, §8, §13).

use std::collections::HashMap;
use std::hash::Hasher;

use serde_json::{Map, Value};

use super::clock::{Evidence, Placement, ServerClock, Unplaced};
use super::telemetry::{metric_index, opt_str, state_index, Identity, ServerSample, STATES};

/// A small multiply-rotate hasher: the de-duplication pass hashes a million
/// samples, where SipHash would dominate it.
#[derive(Default)]
pub(crate) struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        // splitmix64's finaliser: hashbrown takes bucket bits from the low end
        // and a tag from the high end, and timestamps are often multiples of
        // large powers of two, so every bit must depend on every input bit.
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// Distinct identities of `samples` in first-appearance order, and each
/// sample's index into that list.
pub(crate) fn identity_ids(samples: &[ServerSample]) -> (Vec<Identity>, Vec<u32>) {
    let mut table: HashMap<&Identity, u32> = HashMap::new();
    let mut order: Vec<Identity> = Vec::new();
    let mut ids = Vec::with_capacity(samples.len());
    let mut last: Option<(&Identity, u32)> = None;
    for sample in samples {
        let identity = &sample.identity;
        let id = match last {
            Some((prev, id)) if prev == identity => id,
            _ => {
                let next = u32::try_from(order.len()).unwrap_or(u32::MAX);
                let id = *table.entry(identity).or_insert_with(|| {
                    order.push(identity.clone());
                    next
                });
                last = Some((identity, id));
                id
            }
        };
        ids.push(id);
    }
    (order, ids)
}

/// Interns strings to small integers. Consecutive samples nearly always
/// repeat a value and distinct values are few, so the last value and a short
/// list are tried before a hash map.
struct Interner<'a> {
    last: Option<(&'a str, u32)>,
    list: Vec<&'a str>,
    map: HashMap<&'a str, u32>,
}

impl<'a> Interner<'a> {
    const SHORT: usize = 16;

    fn new() -> Self {
        Interner {
            last: None,
            list: Vec::new(),
            map: HashMap::new(),
        }
    }

    fn id(&mut self, s: &'a str) -> u32 {
        if let Some((last, id)) = self.last {
            if last == s {
                return id;
            }
        }
        let found = if self.list.len() <= Self::SHORT {
            self.list.iter().position(|x| *x == s).map(|i| i as u32)
        } else {
            self.map.get(s).copied()
        };
        let id = found.unwrap_or_else(|| {
            let id = u32::try_from(self.list.len()).unwrap_or(u32::MAX);
            self.list.push(s);
            self.map.insert(s, id);
            id
        });
        self.last = Some((s, id));
        id
    }

    fn into_strings(self) -> Vec<String> {
        self.list.into_iter().map(str::to_owned).collect()
    }
}

/// The de-duplicated samples with what later passes look up per sample,
/// computed in one pass over the samples' strings (each sample's strings
/// live in their own allocations, so reading them is the expensive part).
pub(crate) struct Indexed {
    pub samples: Vec<ServerSample>,
    /// Distinct identities in first-appearance order.
    pub identities: Vec<Identity>,
    /// Per sample: index into `identities`.
    pub ids: Vec<u32>,
    /// Per sample: index into `METRICS`, `u8::MAX` for an unknown name (only
    /// possible for samples built by hand).
    pub metric: Vec<u8>,
    /// Per sample: index into `STATES`, `u8::MAX` if unknown.
    pub state: Vec<u8>,
    /// Per sample: index into `sources`.
    pub source: Vec<u32>,
    pub sources: Vec<String>,
    /// Per sample: index into `provenances`.
    pub provenance: Vec<u32>,
    pub provenances: Vec<String>,
}

/// Drop exact duplicates, keeping each first occurrence in place (docs/server-join.md §2.1).
/// Every field takes part: each sample is reduced to integers (interned
/// strings) and hashed, the hashes sorted, and only samples with equal
/// hashes compared in full.
pub(crate) fn dedup(samples: Vec<ServerSample>) -> Indexed {
    let (identities, mut ids) = identity_ids(&samples);
    let n = samples.len();
    let mut runs = Interner::new();
    let mut other_metrics = Interner::new();
    let mut other_states = Interner::new();
    let mut sources = Interner::new();
    let mut provenances = Interner::new();
    let mut details = Interner::new();
    let (mut metric, mut state) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut source, mut provenance) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut hashed: Vec<(u64, u32)> = Vec::with_capacity(n);
    for (i, s) in samples.iter().enumerate() {
        let m = metric_index(&s.metric).map_or(u8::MAX, |m| m as u8);
        let st = state_index(&s.state).map_or(u8::MAX, |k| k as u8);
        let src = sources.id(&s.source);
        let prov = provenances.id(&s.provenance);
        let mut h = FastHasher::default();
        h.write_u32(ids[i]);
        h.write_u32(runs.id(&s.run_id));
        h.write_i64(s.observed_at_ns);
        h.write_u32(if m == u8::MAX {
            256 + other_metrics.id(&s.metric)
        } else {
            u32::from(m)
        });
        h.write_i64(s.value_bytes.unwrap_or(-1));
        h.write_u32(if st == u8::MAX {
            256 + other_states.id(&s.state)
        } else {
            u32::from(st)
        });
        h.write_u32(src);
        h.write_i64(s.interval_ms);
        h.write_u32(s.detail.as_deref().map_or(u32::MAX, |d| details.id(d)));
        h.write_u32(prov);
        hashed.push((h.finish(), i as u32));
        metric.push(m);
        state.push(st);
        source.push(src);
        provenance.push(prov);
    }
    hashed.sort_unstable();
    let mut keep = vec![true; n];
    let mut run_start = 0;
    while run_start < hashed.len() {
        let hash = hashed[run_start].0;
        let run_end = hashed[run_start..]
            .iter()
            .position(|(h, _)| *h != hash)
            .map_or(hashed.len(), |p| run_start + p);
        // Within a run indices ascend, so each sample is checked against the
        // earlier ones still kept: the first occurrence survives.
        for j in run_start + 1..run_end {
            let later = hashed[j].1 as usize;
            let duplicate = hashed[run_start..j].iter().any(|&(_, earlier)| {
                let earlier = earlier as usize;
                keep[earlier] && samples[earlier] == samples[later]
            });
            if duplicate {
                keep[later] = false;
            }
        }
        run_start = run_end;
    }
    let sources = sources.into_strings();
    let provenances = provenances.into_strings();
    // In place: a list without duplicates moves nothing.
    let mut samples = samples;
    if keep.contains(&false) {
        retain_flagged(&mut samples, &keep);
        retain_flagged(&mut ids, &keep);
        retain_flagged(&mut metric, &keep);
        retain_flagged(&mut state, &keep);
        retain_flagged(&mut source, &keep);
        retain_flagged(&mut provenance, &keep);
    }
    // The first occurrence of every identity is kept, so first-appearance
    // order and the identity indices stay valid after dropping duplicates.
    Indexed {
        samples,
        identities,
        ids,
        metric,
        state,
        source,
        sources,
        provenance,
        provenances,
    }
}

/// Keep the elements whose flag is set.
fn retain_flagged<T>(items: &mut Vec<T>, keep: &[bool]) {
    let mut flags = keep.iter().copied();
    items.retain(|_| flags.next().unwrap_or(true));
}

/// Why the samples are neither one server nor one complete group (docs/server-join.md §4.1).
pub(crate) fn membership_issue(identities: &[Identity]) -> Option<&'static str> {
    let groups: Vec<Option<&str>> = {
        let mut g: Vec<Option<&str>> = identities.iter().map(|i| i.group_id.as_deref()).collect();
        g.sort();
        g.dedup();
        g
    };
    if groups == [None] {
        return (identities.len() != 1).then_some("multiple_server_identities");
    }
    if groups.contains(&None) {
        return Some("undeclared_server_identity");
    }
    if groups.len() > 1 {
        return Some("multiple_server_groups");
    }
    let mut sizes: Vec<Option<i64>> = identities.iter().map(|i| i.world_size).collect();
    sizes.sort();
    sizes.dedup();
    if sizes.len() != 1 {
        return Some("inconsistent_group_size");
    }
    let mut ranks: Vec<Option<i64>> = identities.iter().map(|i| i.rank).collect();
    ranks.sort();
    let distinct = {
        let mut r = ranks.clone();
        r.dedup();
        r
    };
    if distinct.len() != ranks.len() {
        return Some("group_member_changed");
    }
    if (distinct.len() as i64) < sizes[0].unwrap_or(0) {
        return Some("group_member_missing");
    }
    None
}

/// One joined server identity: its samples (indices into the de-duplicated
/// list, in list order), its clock and where each sample landed.
pub(crate) struct Member {
    pub identity: Identity,
    pub samples: Vec<usize>,
    pub clock: usize,
    /// Parallel to `samples`.
    pub placements: Vec<Result<Placement, Unplaced>>,
    /// Alignments used, in order of first use, with their sample counts.
    pub applied: Vec<(Option<usize>, u64)>,
    pub uncovered: u64,
    pub ambiguous: u64,
}

impl Member {
    pub fn placed_count(&self) -> usize {
        self.placements.iter().filter(|p| p.is_ok()).count()
    }
}

/// Group sample indices by identity, ordered by rank (null as 0), stable on
/// first appearance (docs/server-join.md §4.2).
pub(crate) fn members_by_rank(identities: &[Identity], ids: &[u32]) -> Vec<(Identity, Vec<usize>)> {
    let mut grouped: Vec<Vec<usize>> = vec![Vec::new(); identities.len()];
    for (index, &id) in ids.iter().enumerate() {
        grouped[id as usize].push(index);
    }
    let mut order: Vec<usize> = (0..identities.len()).collect();
    order.sort_by_key(|&i| identities[i].rank.unwrap_or(0));
    order
        .into_iter()
        .map(|i| (identities[i].clone(), std::mem::take(&mut grouped[i])))
        .collect()
}

/// Place every sample of one member (docs/server-join.md §6.4).
pub(crate) fn place_member(
    identity: Identity,
    sample_indices: Vec<usize>,
    samples: &[ServerSample],
    clock_index: usize,
    clock: &ServerClock,
) -> Member {
    let mut placements = Vec::with_capacity(sample_indices.len());
    let mut applied: Vec<(Option<usize>, u64)> = Vec::new();
    let (mut uncovered, mut ambiguous) = (0, 0);
    for &i in &sample_indices {
        let placement = clock.align(samples[i].observed_at_ns);
        match &placement {
            Ok(p) => match applied.iter_mut().find(|(a, _)| *a == p.alignment) {
                Some((_, count)) => *count += 1,
                None => applied.push((p.alignment, 1)),
            },
            Err(Unplaced::Uncovered) => uncovered += 1,
            Err(Unplaced::Ambiguous) => ambiguous += 1,
        }
        placements.push(placement);
    }
    Member {
        identity,
        samples: sample_indices,
        clock: clock_index,
        placements,
        applied,
        uncovered,
        ambiguous,
    }
}

/// JSON for a time that is an `i64` in practice; wider values (possible only
/// with extreme offsets, which Python keeps exact) degrade to a float.
pub(crate) fn time_value(v: i128) -> Value {
    if let Ok(i) = i64::try_from(v) {
        Value::from(i)
    } else if let Ok(u) = u64::try_from(v) {
        Value::from(u)
    } else {
        Value::from(v as f64)
    }
}

/// One `clock_alignments` entry (docs/server-join.md §6.4).
fn applied_entry(clock: &ServerClock, alignment: Option<usize>, count: u64) -> Map<String, Value> {
    let mut m = Map::new();
    match alignment.and_then(|i| clock.alignments.get(i)) {
        None => {
            m.insert("source".into(), Value::from("same_host"));
            m.insert("event_id".into(), Value::Null);
            m.insert(
                "from_clock_domain".into(),
                Value::from(clock.server_domain.clone()),
            );
            m.insert(
                "to_clock_domain".into(),
                Value::from(clock.client_domain.clone()),
            );
            m.insert("offset_ns".into(), Value::from(0));
            m.insert(
                "uncertainty_ns".into(),
                Value::from(clock.same_clock_uncertainty_ns),
            );
            m.insert("valid_from_ns".into(), Value::Null);
            m.insert("valid_to_ns".into(), Value::Null);
        }
        Some(a) => {
            let source = if a.event_id == super::clock::CLI_ALIGNMENT_ID {
                "operator"
            } else {
                "artifact"
            };
            m.insert("source".into(), Value::from(source));
            m.insert("event_id".into(), Value::from(a.event_id.clone()));
            m.insert(
                "from_clock_domain".into(),
                Value::from(a.from_clock_domain.clone()),
            );
            m.insert(
                "to_clock_domain".into(),
                Value::from(a.to_clock_domain.clone()),
            );
            m.insert("offset_ns".into(), Value::from(a.offset_ns));
            m.insert("uncertainty_ns".into(), Value::from(a.uncertainty_ns));
            m.insert(
                "valid_from_ns".into(),
                a.valid_from_ns.map_or(Value::Null, Value::from),
            );
            m.insert(
                "valid_to_ns".into(),
                a.valid_to_ns.map_or(Value::Null, Value::from),
            );
        }
    }
    m.insert("aligned_samples".into(), Value::from(count));
    m
}

/// Where the observed process or GPU stopped being the original one (docs/server-join.md §7.4).
pub(crate) struct Invalidation {
    pub observed_at_ns: i64,
    pub detail: Option<String>,
    pub last_confirmed_at_ns: Option<i64>,
}

impl Invalidation {
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("observed_at_ns".into(), Value::from(self.observed_at_ns));
        m.insert("detail".into(), opt_str(&self.detail));
        m.insert(
            "last_confirmed_at_ns".into(),
            self.last_confirmed_at_ns.map_or(Value::Null, Value::from),
        );
        Value::Object(m)
    }
}

pub(crate) fn invalidation(member: &Member, samples: &[ServerSample]) -> Option<Invalidation> {
    let mut first: Option<&ServerSample> = None;
    for &i in &member.samples {
        let s = &samples[i];
        if s.state == "invalid" && first.is_none_or_earlier(s) {
            first = Some(s);
        }
    }
    let first = first?;
    let last_confirmed_at_ns = member
        .samples
        .iter()
        .map(|&i| samples[i].observed_at_ns)
        .filter(|&t| t < first.observed_at_ns)
        .max();
    Some(Invalidation {
        observed_at_ns: first.observed_at_ns,
        detail: first.detail.clone(),
        last_confirmed_at_ns,
    })
}

/// `min(..., key=observed_at_ns)`: a later candidate wins only if strictly
/// earlier, so ties keep the first in member order.
trait EarliestSoFar {
    fn is_none_or_earlier(&self, candidate: &ServerSample) -> bool;
}

impl EarliestSoFar for Option<&ServerSample> {
    fn is_none_or_earlier(&self, candidate: &ServerSample) -> bool {
        self.is_none_or(|best| candidate.observed_at_ns < best.observed_at_ns)
    }
}

/// The joined report (docs/server-join.md §7): membership, clock fields and attribution.
pub(crate) fn joined_report(
    members: &[Member],
    clocks: &[ServerClock],
    samples: &[ServerSample],
) -> Map<String, Value> {
    let mut report = Map::new();
    report.insert("status".into(), Value::from("joined"));
    report.insert(
        "route_evidence".into(),
        Value::from("operator_declared_direct"),
    );
    let first = &members[0].identity;
    match &first.group_id {
        None => {
            report.insert("identity".into(), first.to_json());
            report.insert(
                "invalidation".into(),
                invalidation(&members[0], samples).map_or(Value::Null, |i| i.to_json()),
            );
        }
        Some(group_id) => {
            let entries: Vec<Value> = members
                .iter()
                .map(|m| {
                    let mut e = Map::new();
                    e.insert("rank".into(), super::telemetry::opt_int(m.identity.rank));
                    e.insert("identity".into(), m.identity.to_json());
                    e.insert(
                        "clock_alignment_evidence".into(),
                        Value::from(clocks[m.clock].evidence.as_str()),
                    );
                    e.insert(
                        "invalidation".into(),
                        invalidation(m, samples).map_or(Value::Null, |i| i.to_json()),
                    );
                    Value::Object(e)
                })
                .collect();
            let mut group = Map::new();
            group.insert("group_id".into(), Value::from(group_id.clone()));
            group.insert(
                "world_size".into(),
                super::telemetry::opt_int(first.world_size),
            );
            group.insert("members".into(), Value::Array(entries));
            report.insert("group".into(), Value::Object(group));
        }
    }
    // Merge entries equal in all but the count, keeping first positions (docs/server-join.md §7.3).
    let mut merged: Vec<Map<String, Value>> = Vec::new();
    for member in members {
        let clock = &clocks[member.clock];
        for &(alignment, count) in &member.applied {
            let entry = applied_entry(clock, alignment, count);
            let same = |m: &Map<String, Value>| {
                m.iter()
                    .filter(|(k, _)| *k != "aligned_samples")
                    .all(|(k, v)| entry.get(k) == Some(v))
            };
            match merged.iter_mut().find(|m| same(m)) {
                Some(existing) => {
                    let total = existing
                        .get("aligned_samples")
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                        + count;
                    existing.insert("aligned_samples".into(), Value::from(total));
                }
                None => merged.push(entry),
            }
        }
    }
    let mut offsets: Vec<i64> = merged
        .iter()
        .filter_map(|m| m.get("offset_ns").and_then(Value::as_i64))
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    let common_offset = match offsets.as_slice() {
        [one] => Value::from(*one),
        _ => Value::Null,
    };
    let mut evidence: Vec<Evidence> = members.iter().map(|m| clocks[m.clock].evidence).collect();
    evidence.sort();
    evidence.dedup();
    let evidence = match evidence.as_slice() {
        [one] => one.as_str(),
        _ => "mixed",
    };
    let max_uncertainty = members
        .iter()
        .flat_map(|m| m.placements.iter().filter_map(|p| p.as_ref().ok()))
        .map(|p| p.uncertainty_ns)
        .max()
        .unwrap_or(0);
    report.insert("clock_alignment_evidence".into(), Value::from(evidence));
    report.insert("clock_offset_ns".into(), common_offset);
    report.insert("clock_uncertainty_ns".into(), time_value(max_uncertainty));
    report.insert(
        "clock_alignments".into(),
        Value::Array(merged.into_iter().map(Value::Object).collect()),
    );
    let mut unaligned = Map::new();
    unaligned.insert(
        "uncovered".into(),
        Value::from(members.iter().map(|m| m.uncovered).sum::<u64>()),
    );
    unaligned.insert(
        "ambiguous".into(),
        Value::from(members.iter().map(|m| m.ambiguous).sum::<u64>()),
    );
    report.insert("unaligned_samples".into(), Value::Object(unaligned));
    for (key, pick) in [
        ("overridden_clock_alignments", 0),
        ("ignored_clock_alignments", 1),
    ] {
        let mut ids: Vec<&String> = members
            .iter()
            .flat_map(|m| {
                let c = &clocks[m.clock];
                if pick == 0 {
                    c.overridden.iter()
                } else {
                    c.ignored.iter()
                }
            })
            .collect();
        ids.sort();
        ids.dedup();
        if !ids.is_empty() {
            report.insert(
                key.into(),
                Value::Array(ids.into_iter().map(|s| Value::from(s.clone())).collect()),
            );
        }
    }
    report.insert(
        "attribution".into(),
        Value::from("case_window_observation_only"),
    );
    report
}

/// `telemetry.server_targets` (docs/server-join.md §13): one entry per identity, ordered by
/// (host, pid, process start, device UUID or ""), ties in appearance order.
pub(crate) fn server_targets(indexed: &Indexed) -> Value {
    let identities = &indexed.identities;
    let mut metrics: Vec<[bool; 9]> = vec![[false; 9]; identities.len()];
    let mut other_metrics: Vec<Vec<String>> = vec![Vec::new(); identities.len()];
    let mut states: Vec<[u64; 4]> = vec![[0; 4]; identities.len()];
    for (i, &id) in indexed.ids.iter().enumerate() {
        let id = id as usize;
        match indexed.metric[i] {
            u8::MAX => other_metrics[id].push(indexed.samples[i].metric.clone()),
            m => metrics[id][usize::from(m)] = true,
        }
        if let Some(count) = states[id].get_mut(usize::from(indexed.state[i])) {
            *count += 1;
        }
    }
    let mut order: Vec<usize> = (0..identities.len()).collect();
    order.sort_by(|&a, &b| {
        let key = |i: &Identity| {
            (
                i.host.clone(),
                i.pid,
                i.process_start_ns,
                i.device_uuid.clone().unwrap_or_default(),
            )
        };
        key(&identities[a]).cmp(&key(&identities[b]))
    });
    let targets = order
        .into_iter()
        .map(|i| {
            let mut names: Vec<String> = super::telemetry::METRICS
                .iter()
                .zip(metrics[i])
                .filter(|(_, seen)| *seen)
                .map(|((name, _, _), _)| (*name).to_owned())
                .chain(other_metrics[i].iter().cloned())
                .collect();
            names.sort();
            names.dedup();
            let mut counts = Map::new();
            for (k, state) in STATES.iter().enumerate() {
                counts.insert((*state).to_owned(), Value::from(states[i][k]));
            }
            let mut t = Map::new();
            t.insert("identity".into(), identities[i].to_json());
            t.insert(
                "metrics".into(),
                Value::Array(names.into_iter().map(Value::from).collect()),
            );
            t.insert("sample_states".into(), Value::Object(counts));
            Value::Object(t)
        })
        .collect();
    Value::Array(targets)
}
