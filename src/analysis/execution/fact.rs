//! One bulk execution record (a step, a membership, a hook request, a GPU
//! activity) reduced to what the block, the observer and the admitted
//! requests read of it. The reduction is made from a parsed event, either at
//! analysis time or at ingest, where it is stored as one line of text
//! (`execution_facts`, migrations/0007) that the report reads back
//! instead of the record's JSON: a large import holds millions of records.
use std::borrow::Cow;

use serde_json::{Map, Value};

use super::event::{busy_intervals, Event, Kind, Ref};
use crate::py::json as pyjson;

/// The lines of stored segments (each line ends with a newline).
pub fn lines(segments: &[String]) -> impl Iterator<Item = &str> {
    segments.iter().flat_map(|s| s.lines())
}

/// Field `i` of a stored line of kind `kind` (`i`, `m`, `r`, `a`): a cheap
/// read for a caller that needs one field of many lines.
pub fn field(line: &str, kind: char, i: usize) -> Option<&str> {
    let mut parts = line.split(SEP);
    if parts.next()? != kind.encode_utf8(&mut [0; 4]) {
        return None;
    }
    parts.nth(i - 1)
}

/// The field separator of the stored line; a record whose strings hold it
/// is not stored as a line (the report reads its body).
const SEP: char = '\u{1f}';
const FIELDS: usize = 16;

/// The context fields a fact reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scope<'a> {
    pub run_id: &'a str,
    pub session: &'a str,
    pub producer: &'a str,
    pub source: &'a str,
    pub device_uuid: Option<&'a str>,
    pub clock_kind: &'a str,
    pub clock_domain: &'a str,
}

impl<'a> Scope<'a> {
    pub fn of(context: &'a Map<String, Value>) -> Self {
        let s = |k: &str| context.get(k).and_then(Value::as_str);
        Scope {
            run_id: s("run_id").unwrap_or(""),
            session: s("session_id").unwrap_or(""),
            producer: s("producer_id").unwrap_or(""),
            source: s("source").unwrap_or(""),
            device_uuid: s("device_uuid"),
            clock_kind: s("clock_kind").unwrap_or(""),
            clock_domain: s("clock_domain").unwrap_or(""),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Fact<'a> {
    pub kind: Kind,
    /// Shared by the facts of one context (a large import has a handful).
    pub scope: &'a Scope<'a>,
    pub event_id: &'a str,
    /// The step (iteration, membership, activity) or the request (hook request).
    pub main: Option<Ref<'a>>,
    /// A membership's request.
    pub request: Option<Ref<'a>>,
    /// A membership's non-empty string `ownership`; a hook request's
    /// truthy `ownership` and a step's truthy `state` in string form; an
    /// activity's truthy `unresolved_reason` in string form.
    pub label: Option<Cow<'a, str>>,
    /// A step's run, foreign and unresolved member counts, when all three
    /// are integers.
    pub counts: Option<(i64, i64, i64)>,
    pub update_failed: bool,
    /// An activity in the `gpu` domain.
    pub gpu: bool,
    /// A step's `metadata.start_wall_ns` when a number.
    pub start_wall: Option<f64>,
    pub start_ns: Option<i64>,
    pub end_ns: Option<i64>,
    /// An activity's integer `metadata.summed_duration_ns`.
    pub summed: Option<i64>,
    /// An activity's busy intervals (None without a complete span).
    pub busy: Option<Vec<(i64, i64)>>,
    /// A hook request's truthy `metadata.x_request_id` in string form.
    pub x_request_id: Option<Cow<'a, str>>,
}

fn truthy_str(v: &Value) -> Option<Cow<'_, str>> {
    if !pyjson::truthy(v) {
        return None;
    }
    Some(match v {
        Value::String(s) if pyjson::sentinel_f64(s).is_none() => Cow::Borrowed(s.as_str()),
        other => Cow::Owned(pyjson::str_form(other)),
    })
}

fn int(v: &Value) -> Option<i64> {
    if pyjson::is_int(v) {
        v.as_i64()
    } else {
        None
    }
}

impl<'a> Fact<'a> {
    /// The fact of a parsed bulk event, `scope` being its context's; None
    /// for another kind.
    pub fn of(e: &Event<'a>, scope: &'a Scope<'a>) -> Option<Fact<'a>> {
        let mut f = Fact {
            kind: e.kind,
            scope,
            event_id: e.event_id,
            main: None,
            request: None,
            label: None,
            counts: None,
            update_failed: false,
            gpu: false,
            start_wall: None,
            start_ns: e.int("start_ns"),
            end_ns: e.int("end_ns"),
            summed: None,
            busy: None,
            x_request_id: None,
        };
        match e.kind {
            Kind::Iteration => {
                f.main = e.reference("iteration_ref");
                f.label = truthy_str(e.meta("state"));
                let c = (
                    int(e.meta("run_members")),
                    int(e.meta("foreign_members")),
                    int(e.meta("unresolved_members")),
                );
                if let (Some(r), Some(fo), Some(u)) = c {
                    f.counts = Some((r, fo, u));
                }
                f.update_failed = pyjson::truthy(e.meta("update_failed"));
                f.start_wall = pyjson::number(e.meta("start_wall_ns"));
            }
            Kind::Membership => {
                f.main = e.reference("iteration_ref");
                f.request = e.reference("request_ref");
                f.label = match e.meta("ownership") {
                    Value::String(s) if !s.is_empty() => Some(Cow::Borrowed(s.as_str())),
                    _ => None,
                };
            }
            Kind::Request => {
                f.main = e.reference("request_ref");
                f.label = truthy_str(e.meta("ownership"));
                f.x_request_id = truthy_str(e.meta("x_request_id"));
            }
            Kind::Activity => {
                f.main = e.reference("iteration_ref");
                f.gpu = e.field("activity_domain").as_str() == Some("gpu");
                f.label = truthy_str(e.meta("unresolved_reason"));
                f.summed = int(e.meta("summed_duration_ns"));
                f.busy = match e.meta("intervals") {
                    Value::Null => match (f.start_ns, f.end_ns) {
                        (Some(s), Some(end)) => Some(vec![(s, end)]),
                        _ => None,
                    },
                    raw => busy_intervals(raw, f.start_ns, f.end_ns),
                };
            }
            _ => return None,
        }
        Some(f)
    }

    /// The stored line of a fact whose event came with `context_id`; None
    /// when a string holds the separator.
    pub fn encode(&self, context_id: &str) -> Option<String> {
        let kind = match self.kind {
            Kind::Iteration => "i",
            Kind::Membership => "m",
            Kind::Request => "r",
            Kind::Activity => "a",
            _ => return None,
        };
        let opt = |v: Option<i64>| v.map_or(String::new(), |v| v.to_string());
        let (mp, mi) = self.main.map_or(("", ""), |r| (r.producer, r.id));
        let (rp, ri) = self.request.map_or(("", ""), |r| (r.producer, r.id));
        let fields: [Cow<str>; FIELDS] = [
            kind.into(),
            context_id.into(),
            self.event_id.into(),
            mp.into(),
            mi.into(),
            rp.into(),
            ri.into(),
            self.label.clone().unwrap_or_default(),
            self.counts
                .map_or(String::new(), |(r, f, u)| format!("{r},{f},{u}"))
                .into(),
            (u8::from(self.update_failed) | (u8::from(self.gpu) << 1))
                .to_string()
                .into(),
            self.start_wall
                .map_or(String::new(), |v| format!("{v:?}"))
                .into(),
            opt(self.start_ns).into(),
            opt(self.end_ns).into(),
            opt(self.summed).into(),
            self.busy
                .as_ref()
                .map_or(String::new(), |b| {
                    b.iter()
                        .map(|(s, e)| format!("{s}:{e}"))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .into(),
            self.x_request_id.clone().unwrap_or_default(),
        ];
        if fields.iter().any(|f| f.contains([SEP, '\n', '\r'])) {
            return None;
        }
        Some(fields.join("\u{1f}"))
    }

    /// A stored line back, its context looked up by `context_id`; None when
    /// it does not read (the loader then reads the bodies).
    pub fn decode(
        line: &'a str,
        context: impl Fn(&str) -> Option<&'a Scope<'a>>,
    ) -> Option<Fact<'a>> {
        let mut parts: [&'a str; FIELDS] = [""; FIELDS];
        let mut n = 0;
        for part in line.split(SEP) {
            *parts.get_mut(n)? = part;
            n += 1;
        }
        if n != FIELDS {
            return None;
        }
        let kind = match parts[0] {
            "i" => Kind::Iteration,
            "m" => Kind::Membership,
            "r" => Kind::Request,
            "a" => Kind::Activity,
            _ => return None,
        };
        let scope = context(parts[1])?;
        let reference = |p: &'a str, i: &'a str| {
            (!p.is_empty() || !i.is_empty()).then_some(Ref { producer: p, id: i })
        };
        let text = |s: &'a str| (!s.is_empty()).then_some(Cow::Borrowed(s));
        let num = |s: &str| -> Option<Option<i64>> {
            if s.is_empty() {
                Some(None)
            } else {
                s.parse().ok().map(Some)
            }
        };
        let counts = if parts[8].is_empty() {
            None
        } else {
            let c: Vec<i64> = parts[8]
                .split(',')
                .map(str::parse)
                .collect::<Result<_, _>>()
                .ok()?;
            match c.as_slice() {
                [r, f, u] => Some((*r, *f, *u)),
                _ => return None,
            }
        };
        let flags: u8 = parts[9].parse().ok()?;
        let busy = if parts[14].is_empty() {
            None
        } else {
            let mut v = Vec::new();
            for pair in parts[14].split(',') {
                let (s, e) = pair.split_once(':')?;
                v.push((s.parse().ok()?, e.parse().ok()?));
            }
            Some(v)
        };
        Some(Fact {
            kind,
            scope,
            event_id: parts[2],
            main: reference(parts[3], parts[4]),
            request: reference(parts[5], parts[6]),
            label: text(parts[7]),
            counts,
            update_failed: flags & 1 != 0,
            gpu: flags & 2 != 0,
            start_wall: if parts[10].is_empty() {
                None
            } else {
                Some(parts[10].parse().ok()?)
            },
            start_ns: num(parts[11])?,
            end_ns: num(parts[12])?,
            summed: num(parts[13])?,
            busy,
            x_request_id: text(parts[15]),
        })
    }
}
