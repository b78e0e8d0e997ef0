//! LEB128: an unsigned integer in 7-bit groups, least significant first,
//! the high bit of each byte set while more follow. The request packs
//! (`db::pack`) and Parquet's RLE/bit-packed headers (`columnar::pages`)
//! both write it.

/// Appends `v` as an unsigned LEB128 varint.
#[inline]
pub fn put_uleb128(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seven_bits_a_byte_low_first() {
        let enc = |v: u64| {
            let mut out = Vec::new();
            put_uleb128(&mut out, v);
            out
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(127), [127]);
        assert_eq!(enc(128), [0x80, 1]);
        assert_eq!(enc(300), [0xac, 0x02]);
        assert_eq!(enc(u64::MAX).len(), 10);
    }
}
