//! Open-loop arrival schedules recomputed from a recorded workload
//! (docs/report.md §4.2.3, §4.2.6): the arrival spec of a case, the number of
//! arrivals its bounded schedule holds, and where its observation window
//! ends. Poisson schedules need the exact draws of Python's
//! `random.Random(seed)`, so this module carries an MT19937 seeded the way
//! CPython seeds it.

use serde_json::Value;

/// A schedule with more arrivals than this is refused (a typo in a rate or
/// a duration, as the reference reads it).
pub const MAX_ARRIVALS: usize = 1_000_000;

/// Iterations [`scheduled_endpoint`] spends before giving up. The reference
/// has no bound (it would run for hours, or forever for a schedule whose
/// offsets stop growing); no recorded workload comes near it.
const ENDPOINT_ITERATION_LIMIT: u64 = 100_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrivalMode {
    Closed,
    FixedRate,
    Poisson,
    Burst,
    Replay,
}

impl ArrivalMode {
    /// The recorded string form.
    pub fn parse(mode: &str) -> Option<Self> {
        match mode {
            "closed" => Some(Self::Closed),
            "fixed-rate" => Some(Self::FixedRate),
            "poisson" => Some(Self::Poisson),
            "burst" => Some(Self::Burst),
            "replay" => Some(Self::Replay),
            _ => None,
        }
    }

    fn takes_rate(self) -> bool {
        matches!(self, Self::FixedRate | Self::Poisson)
    }
}

/// A validated arrival spec: rate modes carry a finite positive rate, burst
/// carries a size >= 1 and a finite positive interval, and no mode carries
/// another mode's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArrivalSpec {
    pub mode: ArrivalMode,
    pub rate_per_second: Option<f64>,
    pub burst_size: Option<u64>,
    pub burst_interval_seconds: Option<f64>,
}

/// The spec of a recorded case's `arrival` object, or `None` when it is not
/// an object, has no mode, is a replay (its offsets are not recorded), or
/// fails validation.
///
/// Field types follow the reference's Python semantics: JSON `null` is an
/// absent field; `true`/`false` are the numbers 1/0 (so a rate of `true` is
/// 1/s and `false` is invalid); strings, arrays and objects are invalid.
/// One deliberate difference: a non-integral `burst_size` such as 2.5,
/// which the reference would floor-divide by, is rejected.
pub fn spec_from_json(arrival: &Value) -> Option<ArrivalSpec> {
    let fields = arrival.as_object()?;
    let mode = match fields.get("mode") {
        None | Some(Value::Null) => return None,
        // The reference compares `str(mode)`; only a JSON string can match.
        Some(Value::String(mode)) => ArrivalMode::parse(mode)?,
        Some(_) => return None,
    };
    if mode == ArrivalMode::Replay {
        return None;
    }
    let rate = positive(fields.get("rate_per_second")).ok()?;
    let size = burst_size(fields.get("burst_size")).ok()?;
    let interval = positive(fields.get("burst_interval_seconds")).ok()?;
    let burst = mode == ArrivalMode::Burst;
    if mode.takes_rate() != rate.is_some() || burst != size.is_some() || burst != interval.is_some()
    {
        return None;
    }
    Some(ArrivalSpec {
        mode,
        rate_per_second: rate,
        burst_size: size,
        burst_interval_seconds: interval,
    })
}

/// A field that must be finite and > 0 when present.
fn positive(value: Option<&Value>) -> Result<Option<f64>, ()> {
    let number = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Bool(flag)) => f64::from(u8::from(*flag)),
        Some(Value::Number(number)) => number.as_f64().ok_or(())?,
        Some(_) => return Err(()),
    };
    if number.is_finite() && number > 0.0 {
        Ok(Some(number))
    } else {
        Err(())
    }
}

/// `burst_size` must be a whole number >= 1 when present.
fn burst_size(value: Option<&Value>) -> Result<Option<u64>, ()> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(true)) => Ok(Some(1)),
        Some(Value::Number(number)) => {
            if let Some(size) = number.as_u64() {
                return if size >= 1 { Ok(Some(size)) } else { Err(()) };
            }
            match number.as_f64() {
                // Whole floats such as 4.0 divide like the integer 4.
                Some(size) if size >= 1.0 && size.fract() == 0.0 && size < 1.8e19 => {
                    Ok(Some(size as u64))
                }
                _ => Err(()),
            }
        }
        Some(_) => Err(()),
    }
}

/// Python's `random.Random`: MT19937 with CPython's integer seeding.
#[derive(Clone)]
pub struct PyRandom {
    state: [u32; 624],
    index: usize,
}

impl std::fmt::Debug for PyRandom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyRandom")
            .field("index", &self.index)
            .finish()
    }
}

const N: usize = 624;
const M: usize = 397;

impl PyRandom {
    /// `random.Random(seed)`: seeded by the 32-bit words of `|seed|`.
    pub fn new(seed: i64) -> Self {
        let magnitude = seed.unsigned_abs();
        Self::from_words(&seed_words(u128::from(magnitude)))
    }

    /// `random.Random(seed)` for a seed of any size, given the words of
    /// `|seed|` least significant first (CPython's `init_by_array` key).
    /// Trailing zero words are dropped, and no words means seed 0.
    pub fn from_words(words: &[u32]) -> Self {
        let used = words.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
        let key: &[u32] = if used == 0 { &[0] } else { &words[..used] };
        let mut rng = Self::init_genrand(19_650_218);
        let mt = &mut rng.state;
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            let previous = mt[i - 1] ^ (mt[i - 1] >> 30);
            mt[i] = (mt[i] ^ previous.wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let previous = mt[i - 1] ^ (mt[i - 1] >> 30);
            mt[i] = (mt[i] ^ previous.wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        rng
    }

    fn init_genrand(seed: u32) -> Self {
        let mut state = [0u32; N];
        state[0] = seed;
        for i in 1..N {
            let previous = state[i - 1] ^ (state[i - 1] >> 30);
            state[i] = 1_812_433_253u32
                .wrapping_mul(previous)
                .wrapping_add(i as u32);
        }
        Self { state, index: N }
    }

    fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    fn twist(&mut self) {
        const UPPER: u32 = 0x8000_0000;
        const LOWER: u32 = 0x7fff_ffff;
        const MATRIX: u32 = 0x9908_b0df;
        let mt = &mut self.state;
        for k in 0..N {
            let y = (mt[k] & UPPER) | (mt[(k + 1) % N] & LOWER);
            let mag = if y & 1 == 1 { MATRIX } else { 0 };
            mt[k] = mt[(k + M) % N] ^ (y >> 1) ^ mag;
        }
        self.index = 0;
    }

    /// `random()`: a double in [0, 1) from 53 random bits.
    pub fn random(&mut self) -> f64 {
        let a = self.next_u32() >> 5;
        let b = self.next_u32() >> 6;
        (f64::from(a) * 67_108_864.0 + f64::from(b)) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// `expovariate(lambd)` as CPython 3.11 computes it.
    pub fn expovariate(&mut self, lambd: f64) -> f64 {
        -(1.0 - self.random()).ln() / lambd
    }
}

/// The 32-bit words of a seed's magnitude, least significant first.
fn seed_words(magnitude: u128) -> Vec<u32> {
    let mut words = Vec::new();
    let mut rest = magnitude;
    while rest != 0 {
        words.push(rest as u32);
        rest >>= 32;
    }
    words
}

/// The unbounded offsets of a schedule, in seconds from phase start.
enum Offsets {
    Fixed {
        rate: f64,
        index: u64,
    },
    Burst {
        size: u64,
        interval: f64,
        index: u64,
    },
    Poisson {
        rate: f64,
        rng: Box<PyRandom>,
        next: f64,
    },
}

impl Offsets {
    /// `None` for closed and replay specs, which have no offsets here.
    fn of(spec: &ArrivalSpec, seed: i64) -> Option<Self> {
        match spec.mode {
            ArrivalMode::FixedRate => Some(Self::Fixed {
                rate: spec.rate_per_second?,
                index: 0,
            }),
            ArrivalMode::Burst => Some(Self::Burst {
                size: spec.burst_size?,
                interval: spec.burst_interval_seconds?,
                index: 0,
            }),
            ArrivalMode::Poisson => Some(Self::Poisson {
                rate: spec.rate_per_second?,
                rng: Box::new(PyRandom::new(seed)),
                next: 0.0,
            }),
            ArrivalMode::Closed | ArrivalMode::Replay => None,
        }
    }
}

impl Iterator for Offsets {
    type Item = f64;

    fn next(&mut self) -> Option<f64> {
        Some(match self {
            Self::Fixed { rate, index } => {
                let offset = *index as f64 / *rate;
                *index += 1;
                offset
            }
            Self::Burst {
                size,
                interval,
                index,
            } => {
                let offset = (*index / *size) as f64 * *interval;
                *index += 1;
                offset
            }
            Self::Poisson { rate, rng, next } => {
                let offset = *next;
                *next += rng.expovariate(*rate);
                offset
            }
        })
    }
}

/// How many arrivals the schedule holds: offsets taken while fewer than
/// `request_count` (when set) and before `duration_seconds` (when set).
/// `None` for a closed loop or replay, with neither bound, or beyond
/// [`MAX_ARRIVALS`].
pub fn bounded_count(
    spec: &ArrivalSpec,
    request_count: Option<i64>,
    duration_seconds: Option<f64>,
    seed: i64,
) -> Option<usize> {
    if request_count.is_none() && duration_seconds.is_none() {
        return None;
    }
    let mut taken = 0usize;
    for offset in Offsets::of(spec, seed)? {
        if request_count.is_some_and(|count| taken as i64 >= count) {
            break;
        }
        // NaN never ends the schedule, as `offset >= nan` is false in Python.
        if duration_seconds.is_some_and(|duration| offset >= duration) {
            break;
        }
        if taken == MAX_ARRIVALS {
            return None;
        }
        taken += 1;
    }
    Some(taken)
}

/// Where the schedule's observation window ends, in seconds from phase
/// start: the duration when one is set; otherwise the first offset of the
/// unbounded schedule strictly after the `count`-th arrival (fixed rate:
/// `count / rate`; burst: the next burst). `None` for a closed loop, a
/// replay, a count below 1 or no bound.
pub fn scheduled_endpoint(
    spec: &ArrivalSpec,
    count: Option<i64>,
    duration: Option<f64>,
    seed: i64,
) -> Option<f64> {
    if spec.mode == ArrivalMode::Closed {
        return None;
    }
    if duration.is_some() {
        return duration;
    }
    let count = u64::try_from(count?).ok().filter(|&count| count >= 1)?;
    match spec.mode {
        ArrivalMode::FixedRate => {
            // Offsets are index / rate: start right at index `count`.
            let rate = spec.rate_per_second?;
            let last = (count - 1) as f64 / rate;
            first_after(last, count, |index| index as f64 / rate)
        }
        ArrivalMode::Burst => {
            let size = spec.burst_size?;
            let interval = spec.burst_interval_seconds?;
            let burst = (count - 1) / size;
            let last = burst as f64 * interval;
            first_after(last, burst + 1, |next| next as f64 * interval)
        }
        ArrivalMode::Poisson => {
            if count > ENDPOINT_ITERATION_LIMIT {
                return None;
            }
            let mut offsets = Offsets::of(spec, seed)?;
            let last = offsets.nth((count - 1) as usize)?;
            offsets
                .take(ENDPOINT_ITERATION_LIMIT as usize)
                .find(|&offset| offset > last)
        }
        ArrivalMode::Closed | ArrivalMode::Replay => None,
    }
}

/// The first of `at(start), at(start + 1), ...` strictly greater than
/// `last`, looked for within the iteration limit.
fn first_after(last: f64, start: u64, at: impl Fn(u64) -> f64) -> Option<f64> {
    (start..start.saturating_add(ENDPOINT_ITERATION_LIMIT))
        .map(at)
        .find(|&offset| offset > last)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    // Expected values below were produced by CPython 3.11's `random` module
    // and the reference's `arrivals.scheduled_endpoint` / `arrival_offsets`.

    fn first_five(mut rng: PyRandom) -> Vec<f64> {
        (0..5).map(|_| rng.random()).collect()
    }

    #[test]
    fn random_matches_cpython_for_small_negative_and_big_seeds() {
        let cases: [(i64, [f64; 5]); 5] = [
            (
                0,
                [
                    0.8444218515250481,
                    0.7579544029403025,
                    0.420571580830845,
                    0.25891675029296335,
                    0.5112747213686085,
                ],
            ),
            (
                1,
                [
                    0.13436424411240122,
                    0.8474337369372327,
                    0.763774618976614,
                    0.2550690257394217,
                    0.49543508709194095,
                ],
            ),
            (
                42,
                [
                    0.6394267984578837,
                    0.025010755222666936,
                    0.27502931836911926,
                    0.22321073814882275,
                    0.7364712141640124,
                ],
            ),
            (
                1 << 40,
                [
                    0.1036394562812375,
                    0.6705558677439764,
                    0.4266543913526999,
                    0.38773077278691204,
                    0.6264862385425468,
                ],
            ),
            (
                -7,
                [
                    0.32383276483316237,
                    0.15084917392450192,
                    0.6509344730398537,
                    0.07243628666754276,
                    0.5358820043066892,
                ],
            ),
        ];
        for (seed, expected) in cases {
            assert_eq!(first_five(PyRandom::new(seed)), expected, "seed {seed}");
        }
        // 2**70 + 3: words 3, 0, 64.
        assert_eq!(
            first_five(PyRandom::from_words(&[3, 0, 64, 0])),
            [
                0.16339507200642456,
                0.9974755625541745,
                0.2450324792369598,
                0.28159516427189935,
                0.03324660183942185
            ]
        );
        assert_eq!(
            first_five(PyRandom::from_words(&[])),
            first_five(PyRandom::new(0))
        );
    }

    #[test]
    fn expovariate_matches_cpython() {
        let mut rng = PyRandom::new(42);
        let draws: Vec<f64> = (0..3).map(|_| rng.expovariate(2.5)).collect();
        assert_eq!(
            draws,
            [
                0.4080241149099204,
                0.010131535617095556,
                0.12864962562998622
            ]
        );
    }

    fn poisson(rate: f64) -> ArrivalSpec {
        ArrivalSpec {
            mode: ArrivalMode::Poisson,
            rate_per_second: Some(rate),
            burst_size: None,
            burst_interval_seconds: None,
        }
    }

    #[test]
    fn poisson_schedules_match_the_reference() {
        for (rate, count, seed, expected) in [
            (10.0, 5, 0, 0.48405464715595425),
            (2.5, 100, 42, 39.67385809613901),
            (50.0, 1000, 7, 19.361612601844804),
            (1.0, 1, 1, 0.1442910641095092),
            (3.0, 7, -3, 1.1698043177820856),
        ] {
            let got = scheduled_endpoint(&poisson(rate), Some(count), None, seed);
            assert_eq!(got, Some(expected), "rate {rate} count {count} seed {seed}");
        }
        for (rate, duration, seed, expected) in [
            (10.0, 2.0, 0, 18),
            (2.5, 100.0, 42, 242),
            (50.0, 3.0, 7, 172),
        ] {
            let got = bounded_count(&poisson(rate), None, Some(duration), seed);
            assert_eq!(got, Some(expected), "rate {rate} duration {duration}");
        }
    }

    #[test]
    fn fixed_rate_and_burst_schedules() {
        let fixed = spec_from_json(&json!({"mode": "fixed-rate", "rate_per_second": 3})).unwrap();
        assert_eq!(
            scheduled_endpoint(&fixed, Some(7), None, 0),
            Some(2.3333333333333335)
        );
        // Offsets 0, 1/3, ..., 5/3 are before 2.0; 2.0 itself is not.
        assert_eq!(bounded_count(&fixed, None, Some(2.0), 0), Some(6));
        assert_eq!(bounded_count(&fixed, None, Some(2.0000001), 0), Some(7));
        assert_eq!(bounded_count(&fixed, Some(4), Some(2.0), 0), Some(4));
        assert_eq!(bounded_count(&fixed, Some(-1), None, 0), Some(0));
        let burst = spec_from_json(
            &json!({"mode": "burst", "burst_size": 4, "burst_interval_seconds": 0.5}),
        )
        .unwrap();
        assert_eq!(scheduled_endpoint(&burst, Some(4), None, 0), Some(0.5));
        assert_eq!(scheduled_endpoint(&burst, Some(5), None, 0), Some(1.0));
        assert_eq!(bounded_count(&burst, None, Some(1.0), 0), Some(8));
        assert_eq!(bounded_count(&burst, Some(10), Some(1.0), 0), Some(8));
    }

    #[test]
    fn endpoint_and_count_edge_cases() {
        let fixed = poisson(10.0);
        assert_eq!(scheduled_endpoint(&fixed, Some(3), Some(4.5), 0), Some(4.5));
        assert_eq!(scheduled_endpoint(&fixed, Some(0), None, 0), None);
        assert_eq!(scheduled_endpoint(&fixed, None, None, 0), None);
        assert_eq!(bounded_count(&fixed, None, None, 0), None);
        let closed = spec_from_json(&json!({"mode": "closed"})).unwrap();
        assert_eq!(scheduled_endpoint(&closed, Some(3), Some(1.0), 0), None);
        assert_eq!(bounded_count(&closed, Some(3), None, 0), None);
        // Exactly the limit is fine; one more is refused.
        let fast = spec_from_json(&json!({"mode": "fixed-rate", "rate_per_second": 1e9})).unwrap();
        assert_eq!(
            bounded_count(&fast, Some(1_000_000), None, 0),
            Some(1_000_000)
        );
        assert_eq!(bounded_count(&fast, Some(1_000_001), None, 0), None);
        assert_eq!(bounded_count(&fast, None, Some(1.0), 0), None);
    }

    #[test]
    fn spec_validation_follows_the_reference() {
        let ok = |v: serde_json::Value| spec_from_json(&v);
        assert_eq!(
            ok(json!({"mode": "poisson", "rate_per_second": 2.5, "burst_size": null})),
            Some(poisson(2.5))
        );
        // A bool is a number in Python: true is 1, false is 0.
        assert_eq!(
            ok(json!({"mode": "poisson", "rate_per_second": true})),
            Some(poisson(1.0))
        );
        assert_eq!(
            ok(json!({"mode": "poisson", "rate_per_second": false})),
            None
        );
        assert_eq!(ok(json!({"mode": "poisson", "rate_per_second": "2"})), None);
        assert_eq!(ok(json!({"mode": "poisson", "rate_per_second": 0})), None);
        assert_eq!(
            ok(json!({"mode": "poisson", "rate_per_second": -1.0})),
            None
        );
        assert_eq!(ok(json!({"mode": "poisson"})), None);
        assert_eq!(ok(json!({"mode": "closed", "rate_per_second": 1})), None);
        assert_eq!(
            ok(json!({"mode": "fixed-rate", "rate_per_second": 1, "burst_size": 2})),
            None
        );
        assert_eq!(ok(json!({"mode": "replay"})), None);
        assert_eq!(ok(json!({"mode": "Closed"})), None);
        assert_eq!(ok(json!({"mode": null})), None);
        assert_eq!(ok(json!({"mode": ["closed"]})), None);
        assert_eq!(ok(json!({})), None);
        assert_eq!(ok(json!("closed")), None);
        let burst = |size: serde_json::Value, interval: serde_json::Value| {
            ok(json!({"mode": "burst", "burst_size": size, "burst_interval_seconds": interval}))
                .map(|spec| (spec.burst_size, spec.burst_interval_seconds))
        };
        assert_eq!(burst(json!(3), json!(0.5)), Some((Some(3), Some(0.5))));
        assert_eq!(burst(json!(4.0), json!(1)), Some((Some(4), Some(1.0))));
        assert_eq!(burst(json!(true), json!(true)), Some((Some(1), Some(1.0))));
        assert_eq!(burst(json!(0), json!(1)), None);
        assert_eq!(burst(json!(-2), json!(1)), None);
        assert_eq!(burst(json!(2.5), json!(1)), None);
        assert_eq!(burst(json!("3"), json!(1)), None);
        assert_eq!(burst(json!(3), json!(0)), None);
        assert_eq!(burst(json!(3), json!(null)), None);
    }
}
