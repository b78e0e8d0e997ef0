//! numpy's `default_rng(seed)` as far as the bootstrap uses it: PCG64
//! (XSL-RR) seeded through `SeedSequence`, and `integers(0, n)` drawn with
//! Lemire's bounded method on 32-bit outputs. The reference's bootstrap
//! is `np.random.default_rng(seed)`, so the same seed must draw the same
//! resamples here for its interval to match.

const MULT_128: u128 = (2_549_297_995_355_413_924u128 << 64) | 4_865_540_595_714_422_341u128;
const INIT_A: u32 = 0x43b0_d7e5;
const MULT_A: u32 = 0x931e_8875;
const INIT_B: u32 = 0x8b51_f9dd;
const MULT_B: u32 = 0x58f3_8ded;
const MIX_MULT_L: u32 = 0xca01_f9dd;
const MIX_MULT_R: u32 = 0x4973_f715;
const XSHIFT: u32 = 16;
const POOL_SIZE: usize = 4;

/// A PCG64 generator with numpy's 32-bit output buffer.
pub struct Pcg64 {
    state: u128,
    inc: u128,
    spare: Option<u32>,
}

fn hashmix(value: u32, hash_const: &mut u32) -> u32 {
    let mut value = value ^ *hash_const;
    *hash_const = hash_const.wrapping_mul(MULT_A);
    value = value.wrapping_mul(*hash_const);
    value ^ (value >> XSHIFT)
}

fn mix(x: u32, y: u32) -> u32 {
    let result = MIX_MULT_L
        .wrapping_mul(x)
        .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
    result ^ (result >> XSHIFT)
}

/// `SeedSequence(seed).generate_state(n_words)` as 32-bit words.
fn seed_words(seed: u64, n_words: usize) -> Vec<u32> {
    let mut entropy = Vec::new();
    let mut rest = seed;
    if rest == 0 {
        entropy.push(0);
    }
    while rest > 0 {
        entropy.push((rest & 0xFFFF_FFFF) as u32);
        rest >>= 32;
    }
    let mut pool = [0u32; POOL_SIZE];
    let mut hash_const = INIT_A;
    for (i, slot) in pool.iter_mut().enumerate() {
        *slot = hashmix(entropy.get(i).copied().unwrap_or(0), &mut hash_const);
    }
    for src in 0..POOL_SIZE {
        for dst in 0..POOL_SIZE {
            if src != dst {
                let hashed = hashmix(pool[src], &mut hash_const);
                pool[dst] = mix(pool[dst], hashed);
            }
        }
    }
    for &word in entropy.iter().skip(POOL_SIZE) {
        for slot in pool.iter_mut() {
            let hashed = hashmix(word, &mut hash_const);
            *slot = mix(*slot, hashed);
        }
    }
    let mut hash_const = INIT_B;
    (0..n_words)
        .map(|i| {
            let mut value = pool[i % POOL_SIZE] ^ hash_const;
            hash_const = hash_const.wrapping_mul(MULT_B);
            value = value.wrapping_mul(hash_const);
            value ^ (value >> XSHIFT)
        })
        .collect()
}

impl Pcg64 {
    /// `np.random.default_rng(seed)`.
    pub fn new(seed: u64) -> Self {
        let w = seed_words(seed, 8);
        // Two 32-bit words make one little-endian 64-bit word.
        let word = |i: usize| u64::from(w[2 * i]) | (u64::from(w[2 * i + 1]) << 32);
        let init_state = (u128::from(word(0)) << 64) | u128::from(word(1));
        let init_seq = (u128::from(word(2)) << 64) | u128::from(word(3));
        let mut rng = Pcg64 {
            state: 0,
            inc: (init_seq << 1) | 1,
            spare: None,
        };
        rng.step();
        rng.state = rng.state.wrapping_add(init_state);
        rng.step();
        rng
    }

    fn step(&mut self) {
        self.state = self.state.wrapping_mul(MULT_128).wrapping_add(self.inc);
    }

    /// The next 64-bit output (XSL-RR).
    pub fn next_u64(&mut self) -> u64 {
        self.step();
        let value = ((self.state >> 64) as u64) ^ (self.state as u64);
        value.rotate_right((self.state >> 122) as u32)
    }

    /// The next 32-bit output: each 64-bit one gives its low half, then its high.
    pub fn next_u32(&mut self) -> u32 {
        if let Some(spare) = self.spare.take() {
            return spare;
        }
        let next = self.next_u64();
        self.spare = Some((next >> 32) as u32);
        (next & 0xFFFF_FFFF) as u32
    }

    /// `integers(0, n)`: a value in `[0, n)`, for `1 <= n <= 2^32`.
    pub fn below(&mut self, n: usize) -> usize {
        let rng = (n as u64).saturating_sub(1);
        if rng == 0 {
            return 0;
        }
        if rng == 0xFFFF_FFFF {
            return self.next_u32() as usize;
        }
        let excl = rng + 1;
        let mut m = u64::from(self.next_u32()) * excl;
        let mut leftover = m & 0xFFFF_FFFF;
        if leftover < excl {
            let threshold = (0xFFFF_FFFF - rng) % excl;
            while leftover < threshold {
                m = u64::from(self.next_u32()) * excl;
                leftover = m & 0xFFFF_FFFF;
            }
        }
        (m >> 32) as usize
    }
}

/// numpy's pairwise sum of a contiguous row (eight accumulators up to 128
/// values, halves beyond), so that means agree to the last bit.
pub fn pairwise_sum(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 8 {
        return values.iter().fold(0.0, |acc, v| acc + v);
    }
    if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&values[..8]);
        let whole = n - n % 8;
        let mut i = 8;
        while i < whole {
            for (j, slot) in r.iter_mut().enumerate() {
                *slot += values[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for v in &values[whole..] {
            res += v;
        }
        return res;
    }
    let half = (n / 2) - (n / 2) % 8;
    pairwise_sum(&values[..half]) + pairwise_sum(&values[half..])
}

/// `np.quantile(values, q)` with the default linear method.
pub fn quantile_linear(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let index = q * (n as f64 - 1.0);
    let lo = index.floor();
    let t = index - lo;
    let lo = lo as usize;
    let hi = (lo + 1).min(n - 1);
    let (a, b) = (sorted[lo], sorted[hi]);
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // np.random.default_rng(0).integers(0, 10, 8) and .integers(0, 3, 5) after it.
    #[test]
    fn draws_match_numpy() {
        let mut rng = Pcg64::new(0);
        let first: Vec<usize> = (0..8).map(|_| rng.below(10)).collect();
        let second: Vec<usize> = (0..5).map(|_| rng.below(3)).collect();
        assert_eq!(first, NUMPY_FIRST.to_vec());
        assert_eq!(second, NUMPY_SECOND.to_vec());
    }

    const NUMPY_FIRST: [usize; 8] = [8, 6, 5, 2, 3, 0, 0, 0];
    const NUMPY_SECOND: [usize; 5] = [0, 2, 1, 2, 1];

    #[test]
    fn a_large_seed_matches_numpy() {
        let mut rng = Pcg64::new(12_345_678_901);
        let drawn: Vec<usize> = (0..6).map(|_| rng.below(1000)).collect();
        assert_eq!(drawn, vec![87, 836, 738, 316, 79, 64]);
    }
}
