//! Populations: a case's request counts by outcome, its cohort issues and
//! server admission.
use super::*;

/// One field's values, hashed as a pass reads them, to count those
/// occurring more than once: Σ(count − 1) (Python `==` on JSON values;
/// nulls do not count), the values less the distinct ones.
///
/// Only the hashes are kept and sorted. Ids are nearly always unique, so no
/// hash repeats and the count is 0 without another look at the values (a
/// case of 300,000 requests sorts 300,000 integers instead of filling a set
/// of 300,000 strings, a third of the time); values whose hash repeats are
/// read again and compared through a set.
pub(super) struct Hashed {
    state: foldhash::fast::FixedState,
    hashes: Vec<u64>,
}

impl Hashed {
    pub(super) fn with_capacity(n: usize) -> Self {
        Hashed {
            state: Default::default(),
            hashes: Vec::with_capacity(n),
        }
    }

    fn hash(&self, v: &Value) -> u64 {
        use std::hash::BuildHasher;
        self.state.hash_one(Key(v))
    }

    /// Takes one value (a null does not count).
    pub(super) fn push(&mut self, v: &Value) {
        if !v.is_null() {
            self.hashes.push(self.hash(v));
        }
    }

    /// Σ(count − 1) over the values taken; `again` yields them once more,
    /// in any order (read only when a hash repeats).
    pub(super) fn duplicates<'a>(mut self, again: impl Iterator<Item = &'a Value>) -> usize {
        self.hashes.sort_unstable();
        let repeated: Vec<u64> = self
            .hashes
            .chunk_by(|a, b| a == b)
            .filter(|g| g.len() > 1)
            .map(|g| g[0])
            .collect();
        if repeated.is_empty() {
            return 0;
        }
        let mut groups: Vec<(u64, Key)> = again
            .filter(|v| !v.is_null())
            .filter_map(|v| {
                let h = self.hash(v);
                repeated.binary_search(&h).is_ok().then_some((h, Key(v)))
            })
            .collect();
        groups.sort_unstable_by_key(|(h, _)| *h);
        let mut dup = 0;
        let mut seen: HashSet<&Key, foldhash::fast::FixedState> = Default::default();
        for group in groups.chunk_by(|a, b| a.0 == b.0) {
            seen.clear();
            seen.extend(group.iter().map(|(_, v)| v));
            dup += group.len() - seen.len();
        }
        dup
    }
}

/// A value compared with Python equality for scalars (1 == 1.0 == True);
/// one pointer wide, so the set of a large case's ids stays small.
pub(super) struct Key<'a>(&'a Value);

impl Key<'_> {
    fn text(&self) -> std::borrow::Cow<'_, str> {
        match self.0 {
            Value::String(s) => std::borrow::Cow::Borrowed(s),
            other => std::borrow::Cow::Owned(crate::model::request::canonical(other)),
        }
    }
}

impl PartialEq for Key<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.is_string() == other.0.is_string() && self.text() == other.text()
    }
}

impl Eq for Key<'_> {}

impl std::hash::Hash for Key<'_> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.is_string().hash(h);
        self.text().hash(h);
    }
}

/// Populations, cohort issues and intervals of one case (docs/report.md §4.2).
pub struct Population {
    pub population: Value,
    pub intervals: Value,
}

pub fn population(ctx: &RunContext, case_key: &str, reqs: &[&Request]) -> Population {
    let window = ctx.windows.get(case_key).copied();
    let w = ctx.workload;
    let bounds = WindowBounds::of(window);
    let Tally {
        n,
        other,
        ids,
        x_ids,
        idx,
        index_unrecorded,
        mismatch,
        outside,
        extents,
    } = Tally::read(reqs, &bounds);
    let [successful, failed, timed_out, cancelled, rejected, dropped, unreachable, delivery_unknown] =
        n;
    let offered = reqs.len();
    let sent = offered - dropped;
    let accepted = sent as i64 - unreachable as i64 - delivery_unknown as i64 - rejected as i64;
    let scheduled = scheduled_arrivals(window, w, case_key);
    // Hard issues: any one makes the cohort invalid.
    let mut issues: Vec<String> = Vec::new();
    duplicate_issues(ids, x_ids, reqs, &mut issues);
    index_issues(idx, reqs.len(), scheduled, &mut issues);
    window_issues(
        reqs,
        window,
        w.is_some(),
        &bounds,
        (mismatch, outside),
        &mut issues,
    );
    let cohort_valid = issues.is_empty();
    soft_issues(index_unrecorded, window, &mut issues);
    let (server_admitted, coverage) = server_admission(reqs, accepted, ctx.admitted.as_ref());
    let population = json!({
        "offered": offered, "scheduled": scheduled, "dropped": dropped, "sent": sent,
        "unreachable": unreachable, "delivery_unknown": delivery_unknown, "rejected": rejected,
        "accepted": accepted, "successful": successful, "failed": failed, "timed_out": timed_out,
        "cancelled": cancelled, "censored": timed_out + cancelled, "other": other,
        "server_admitted": server_admitted, "server_evidence_coverage": coverage,
        "cohort_valid": cohort_valid, "issues": issues,
    });
    let intervals = intervals(ctx, case_key, reqs.len(), extents, window, scheduled);
    Population {
        population,
        intervals,
    }
}

/// The measured phase window's start and drain, and the latest end a
/// request may have: a second after the drain.
struct WindowBounds {
    start: Option<Int>,
    drained: Option<Int>,
    late: Option<Int>,
}

impl WindowBounds {
    fn of(window: Option<&Value>) -> Self {
        let start = window.and_then(|wn| ns_of(pyjson::get(wn, "started_at_ns")));
        let drained = window.and_then(|wn| ns_of(pyjson::get(wn, "drained_at_ns")));
        let late = drained
            .as_ref()
            .map(|wd| wd.add(&Int::from(1_000_000_000i64)));
        WindowBounds {
            start,
            drained,
            late,
        }
    }
}

/// What the population reads in its one pass over a case's requests (see
/// `passes`): statuses, ids, indexes, sessions, times.
struct Tally {
    /// Requests per known status: ok, error, timeout, cancelled, rejected,
    /// dropped, unreachable, delivery_unknown.
    n: [usize; 8],
    /// Requests of any other status, by status.
    other: BTreeMap<String, i64>,
    ids: Hashed,
    x_ids: Hashed,
    /// The recorded request indexes, in request order.
    idx: Vec<i64>,
    /// Some request has no index (a boolean one is not counted here).
    index_unrecorded: bool,
    /// Some request's session differs from the first request's.
    mismatch: bool,
    /// Requests without both times, ending before they start, or outside
    /// the window.
    outside: usize,
    extents: Extents,
}

impl Tally {
    fn read(reqs: &[&Request], bounds: &WindowBounds) -> Self {
        let (w_start, w_late) = (&bounds.start, &bounds.late);
        let mut n = [0usize; 8];
        let mut other: BTreeMap<String, i64> = BTreeMap::new();
        let mut ids = Hashed::with_capacity(reqs.len());
        let mut x_ids = Hashed::with_capacity(reqs.len());
        let mut idx: Vec<i64> = Vec::with_capacity(reqs.len());
        let mut index_unrecorded = false;
        let first_session = reqs.first().map(|r| &r.session_id);
        let mut mismatch = false;
        let mut outside = 0usize;
        // The window tests and extents in i64 for the requests whose
        // instants are all i64 (the common case: no `Int` per value),
        // exactly for the others; a bound past i64 sends every request the
        // exact way. The plain extents join the exact ones at the end (a
        // minimum and a maximum, in any order).
        let plain_bound = |b: &Option<Int>| match b {
            None => Some(None),
            Some(Int::Small(v)) => i64::try_from(*v).ok().map(Some),
            Some(Int::Big(_)) => None,
        };
        let mut plain = plain_bound(w_start)
            .zip(plain_bound(w_late))
            .map(|(start, late)| Instants::within(start, late));
        let mut exact = Instants::within(w_start.clone(), w_late.clone());
        for r in reqs {
            let slot = match r.status.as_str() {
                "ok" => Some(0),
                "error" => Some(1),
                "timeout" => Some(2),
                "cancelled" => Some(3),
                "rejected" => Some(4),
                "dropped" => Some(5),
                "unreachable" => Some(6),
                "delivery_unknown" => Some(7),
                s => {
                    *other.entry(s.to_owned()).or_insert(0) += 1;
                    None
                }
            };
            if let Some(slot) = slot {
                n[slot] += 1;
            }
            ids.push(&r.request_id);
            x_ids.push(&r.x_request_id);
            match r.request_index() {
                Some(i) => idx.push(i),
                None => index_unrecorded |= !r.request_index_is_bool,
            }
            mismatch |= Some(&r.session_id) != first_session;
            let dropped = slot == Some(5);
            outside += usize::from(match plain.as_mut().filter(|_| !r.has_wide_times()) {
                Some(plain) => plain.take(r.started_at_ns(), r.ended_at_ns(), dropped),
                None => exact.take(r.started_at(), r.ended_at(), dropped),
            });
        }
        let mut extents = Extents {
            spans: exact.spans,
            sends: exact.sends,
        };
        if let Some(plain) = plain {
            for (from, into) in [
                (plain.sends, &mut extents.sends),
                (plain.spans, &mut extents.spans),
            ] {
                if let Some((lo, hi)) = from {
                    widen(into, Int::from(lo), Int::from(hi));
                }
            }
        }
        Tally {
            n,
            other,
            ids,
            x_ids,
            idx,
            index_unrecorded,
            mismatch,
            outside,
            extents,
        }
    }
}

/// A case's window tests and extents over its requests' instants, in one
/// integer type (`i64` where they and the bounds are, `Int` for any).
struct Instants<T> {
    /// The window's start and the latest end a request may have.
    start: Option<T>,
    late: Option<T>,
    /// Earliest and latest start of the requests sent (not dropped).
    sends: Option<(T, T)>,
    /// Earliest start and latest end of the requests with both.
    spans: Option<(T, T)>,
}

impl<T: PartialOrd + Clone> Instants<T> {
    fn within(start: Option<T>, late: Option<T>) -> Self {
        Instants {
            start,
            late,
            sends: None,
            spans: None,
        }
    }

    /// Takes one request's start and end; true when it lies outside the
    /// window (or lacks either, or ends before it starts).
    #[inline]
    fn take(&mut self, started: Option<T>, ended: Option<T>, dropped: bool) -> bool {
        let outside = match (&started, &ended) {
            (Some(s), Some(e)) => {
                s > e
                    || self.start.as_ref().is_some_and(|ws| s < ws)
                    || self.late.as_ref().is_some_and(|late| e > late)
            }
            _ => true,
        };
        if let (Some(s), false) = (&started, dropped) {
            widen(&mut self.sends, s.clone(), s.clone());
        }
        if let (Some(s), Some(e)) = (started, ended) {
            widen(&mut self.spans, s, e);
        }
        outside
    }
}

/// The arrivals the case scheduled: the window's `scheduled_arrivals`, or,
/// without a window, recomputed from the workload.
fn scheduled_arrivals(window: Option<&Value>, w: Option<&Value>, case_key: &str) -> Option<i64> {
    match window {
        Some(wn) => {
            let v = pyjson::get(wn, "scheduled_arrivals");
            if pyjson::is_number(v) {
                Some(pyjson::int_value(v))
            } else {
                None
            }
        }
        None => w.and_then(|w| recomputed_scheduled(w, case_key)),
    }
}

/// Hard issues: request ids and `x_request_id`s that repeat.
fn duplicate_issues(ids: Hashed, x_ids: Hashed, reqs: &[&Request], issues: &mut Vec<String>) {
    let d = ids.duplicates(reqs.iter().map(|r| &r.request_id));
    if d > 0 {
        issues.push(format!("duplicate_request_id: {d}"));
    }
    let d = x_ids.duplicates(reqs.iter().map(|r| &r.x_request_id));
    if d > 0 {
        issues.push(format!("duplicate_x_request_id: {d}"));
    }
}

/// Hard issues of the request indexes `idx` (`offered` requests): without
/// an index on every request, the count against the scheduled one; with
/// them, repeats, missing indexes and indexes out of range.
fn index_issues(
    mut idx: Vec<i64>,
    offered: usize,
    scheduled: Option<i64>,
    issues: &mut Vec<String>,
) {
    if idx.len() != offered {
        if let Some(s) = scheduled {
            if s != offered as i64 {
                issues.push(format!("offered_differs_from_scheduled: {offered} of {s}"));
            }
        }
    } else {
        let e = scheduled.unwrap_or(offered as i64);
        // Sorted and deduplicated in place: the distinct indexes.
        let recorded = idx.len();
        idx.sort_unstable();
        idx.dedup();
        if idx.len() != recorded {
            issues.push("request_index_repeated".into());
        }
        let inside = idx.iter().filter(|i| **i >= 0 && **i < e).count() as i64;
        let missing = e - inside;
        if missing > 0 {
            issues.push(format!("records_missing: {missing} of {e}"));
        }
        if idx.iter().any(|i| *i < 0 || *i >= e) {
            issues.push("request_index_out_of_range".into());
        }
    }
}

/// Hard issues against the phase window: a session other than the first
/// request's (`mismatch` already says whether the requests disagree), the
/// requests `outside` it, and a window missing or incomplete.
fn window_issues(
    reqs: &[&Request],
    window: Option<&Value>,
    has_workload: bool,
    bounds: &WindowBounds,
    (mut mismatch, outside): (bool, usize),
    issues: &mut Vec<String>,
) {
    let first_session = reqs.first().map(|r| &r.session_id);
    if let Some(wn) = window {
        let w = crate::model::Scalar::of(pyjson::get(wn, "session_id"));
        mismatch |= first_session.is_some_and(|f| *f != w);
    }
    if mismatch {
        issues.push("session_mismatch".into());
    }
    if outside > 0 {
        issues.push(format!("outside_window: {outside}"));
    }
    match window {
        None if has_workload => issues.push("phase_window_missing".into()),
        Some(_) if bounds.start.is_none() || bounds.drained.is_none() => {
            issues.push("phase_window_incomplete".into())
        }
        _ => {}
    }
}

/// Soft issues, which leave the cohort valid: requests without an index,
/// requests still running from before the window.
fn soft_issues(index_unrecorded: bool, window: Option<&Value>, issues: &mut Vec<String>) {
    if index_unrecorded {
        issues.push("request_index_unrecorded".into());
    }
    if let Some(wn) = window {
        let n = pyjson::int_value(pyjson::get(
            pyjson::get(wn, "abandoned_requests"),
            "still_running",
        ));
        if n != 0 {
            issues.push(format!("abandoned_requests_at_start: {n}"));
        }
    }
}

/// Server admission (docs/report.md §4.2.5): the requests the server confirmed it saw (not
/// dropped, their `x_request_id` among `admitted`), and the share of the
/// `accepted` ones among them; both null without any source.
pub fn server_admission(
    reqs: &[&Request],
    accepted: i64,
    admitted: Option<&HashSet<String>>,
) -> (Value, Value) {
    let Some(adm) = admitted else {
        return (Value::Null, Value::Null);
    };
    let seen: Vec<&&Request> = reqs
        .iter()
        .filter(|r| {
            r.status != "dropped" && r.x_request_id.as_str().is_some_and(|x| adm.contains(x))
        })
        .collect();
    let good = seen
        .iter()
        .filter(|r| {
            !matches!(
                r.status.as_str(),
                "dropped" | "unreachable" | "delivery_unknown" | "rejected"
            )
        })
        .count();
    let cov = if accepted == 0 {
        Value::Null
    } else {
        fnum(Some(good as f64 / accepted as f64))
    };
    (json!(seen.len()), cov)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn req(v: Value) -> Request {
        Request::from_record(0, v.as_object().unwrap())
    }

    /// Requests with i64 instants and requests with instants past i64 in one
    /// case: the extents are the minimum and maximum over both kinds, and a
    /// request counts as outside the window by the same tests either way
    /// (worked by hand).
    #[test]
    fn extents_and_window_tests_over_plain_and_wide_instants() {
        const T: i64 = 1_700_000_000_000_000_000;
        let wide = 10_000_000_000_000_000_000u64; // past i64::MAX
        let reqs = [
            // Inside the window.
            req(json!({"status": "ok", "started_at_ns": T + 5, "ended_at_ns": T + 900})),
            // Dropped: a span, but no send.
            req(json!({"status": "dropped", "started_at_ns": T + 1, "ended_at_ns": T + 2})),
            // Ends past the window's drain + 1 s: outside.
            req(
                json!({"status": "ok", "started_at_ns": T + 10, "ended_at_ns": T + 3_000_000_000i64}),
            ),
            // Starts before the window: outside.
            req(json!({"status": "error", "started_at_ns": T - 7, "ended_at_ns": T + 20})),
            // Ends before it starts: outside.
            req(json!({"status": "ok", "started_at_ns": T + 50, "ended_at_ns": T + 40})),
            // No end: outside, and a send.
            req(json!({"status": "ok", "started_at_ns": T + 3})),
        ];
        let window = json!({"started_at_ns": T, "drained_at_ns": T + 1_600_000_000i64});
        let bounds = WindowBounds::of(Some(&window));
        let refs: Vec<&Request> = reqs.iter().collect();
        let t = Tally::read(&refs, &bounds);
        let int = Int::from;
        assert_eq!(t.outside, 4);
        assert_eq!(t.extents.sends, Some((int(T - 7), int(T + 50))));
        assert_eq!(t.extents.spans, Some((int(T - 7), int(T + 3_000_000_000))));
        // One request with wide instants: it widens both extents and is
        // outside (it ends past the window), the others read as before.
        let with_wide = req(json!({"status": "ok", "started_at_ns": T + 4, "ended_at_ns": wide}));
        let mut refs = refs;
        refs.push(&with_wide);
        let t = Tally::read(&refs, &bounds);
        assert_eq!(t.outside, 5);
        assert_eq!(t.extents.sends, Some((int(T - 7), int(T + 50))));
        let wide_int = Int::parse_literal(&wide.to_string()).unwrap();
        assert_eq!(t.extents.spans, Some((int(T - 7), wide_int.clone())));
        // A window bound past i128 sends every request the exact way.
        let huge = "1".repeat(45);
        let window: Value = serde_json::from_str(&format!(
            "{{\"started_at_ns\": {T}, \"drained_at_ns\": {huge}}}"
        ))
        .unwrap();
        let bounds = WindowBounds::of(Some(&window));
        assert!(
            matches!(bounds.late, Some(Int::Big(_))),
            "{:?}",
            bounds.late
        );
        let t = Tally::read(&refs, &bounds);
        // Nothing ends past a drain that late: three are outside.
        assert_eq!(t.outside, 3);
        assert_eq!(t.extents.spans, Some((int(T - 7), wide_int)));
    }
}
