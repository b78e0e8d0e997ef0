//! SQL functions stormlog registers on its own connections, so that queries
//! people write (`stormlog sql`, docs/sql.md) compute figures the way the
//! report does. Today: the `percentile(value, p)` aggregate.

use rusqlite::functions::{Aggregate, Context, FunctionFlags};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Error};

use crate::analysis::stats;

/// Registers every function on `conn`.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_aggregate_function(
        "percentile",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        Percentile,
    )
}

/// `percentile(value, p)`: the report's percentile (docs/report.md §0.2, linear
/// interpolation between order statistics) of the group's values at `p`
/// percent. NULL and non-finite values are skipped, as the report skips
/// them; no values give NULL. `p` must be a number in [0, 100], the same
/// for every row of the group.
struct Percentile;

/// The values seen so far and the level they are asked at.
#[derive(Default)]
struct Acc {
    values: Vec<f64>,
    percent: Option<f64>,
}

fn user_error(message: String) -> Error {
    Error::UserFunctionError(message.into())
}

fn number(v: ValueRef<'_>) -> Option<f64> {
    match v {
        ValueRef::Integer(i) => Some(i as f64),
        ValueRef::Real(f) => Some(f),
        _ => None,
    }
}

impl Aggregate<Acc, Option<f64>> for Percentile {
    fn init(&self, _ctx: &mut Context<'_>) -> rusqlite::Result<Acc> {
        Ok(Acc::default())
    }

    fn step(&self, ctx: &mut Context<'_>, acc: &mut Acc) -> rusqlite::Result<()> {
        let p = number(ctx.get_raw(1))
            .filter(|p| (0.0..=100.0).contains(p))
            .ok_or_else(|| {
                user_error("percentile(value, p): p must be a number from 0 to 100".into())
            })?;
        match acc.percent {
            None => acc.percent = Some(p),
            Some(seen) if seen != p => {
                return Err(user_error(format!(
                    "percentile(value, p): p must be the same for every row of a group ({seen} and {p})"
                )))
            }
            Some(_) => {}
        }
        match ctx.get_raw(0) {
            ValueRef::Null => {}
            v => {
                let x = number(v).ok_or_else(|| {
                    user_error("percentile(value, p): value must be a number or NULL".into())
                })?;
                if x.is_finite() {
                    acc.values.push(x);
                }
            }
        }
        Ok(())
    }

    fn finalize(&self, _ctx: &mut Context<'_>, acc: Option<Acc>) -> rusqlite::Result<Option<f64>> {
        Ok(acc.and_then(|a| {
            // The report asks at `P / 100.0`; dividing the same way keeps the
            // level bit-identical for 50, 90, 95 and 99.
            let level = a.percent? / 100.0;
            stats::percentile(&a.values, level)
        }))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn conn() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        register(&c).unwrap();
        c.execute_batch(
            "CREATE TABLE t (g TEXT, v REAL);
             INSERT INTO t VALUES ('a', 100), ('a', 400), ('a', 300), ('a', 200), ('a', NULL),
                                  ('b', 7.5), ('c', NULL);",
        )
        .unwrap();
        c
    }

    fn pct(c: &Connection, sql: &str) -> rusqlite::Result<Option<f64>> {
        c.query_row(sql, [], |r| r.get(0))
    }

    #[test]
    fn matches_the_spec_vectors() {
        let c = conn();
        // docs/report.md §0.2 vectors over [100, 200, 300, 400].
        let q = |p: &str| {
            pct(
                &c,
                &format!("SELECT percentile(v, {p}) FROM t WHERE g = 'a'"),
            )
        };
        assert_eq!(q("50").unwrap(), Some(250.0));
        assert_eq!(q("95").unwrap(), Some(385.0));
        assert_eq!(q("99").unwrap(), Some(396.99999999999994));
        assert_eq!(q("0").unwrap(), Some(100.0));
        assert_eq!(q("100").unwrap(), Some(400.0));
    }

    #[test]
    fn single_null_and_empty_groups() {
        let c = conn();
        assert_eq!(
            pct(&c, "SELECT percentile(v, 95) FROM t WHERE g = 'b'").unwrap(),
            Some(7.5)
        );
        assert_eq!(
            pct(&c, "SELECT percentile(v, 95) FROM t WHERE g = 'c'").unwrap(),
            None
        );
        assert_eq!(
            pct(&c, "SELECT percentile(v, 95) FROM t WHERE g = 'zz'").unwrap(),
            None
        );
    }

    #[test]
    fn bad_levels_and_values_are_errors() {
        let c = conn();
        for sql in [
            "SELECT percentile(v, 101) FROM t",
            "SELECT percentile(v, -1) FROM t",
            "SELECT percentile(v, 'x') FROM t",
            "SELECT percentile(v, CASE WHEN v > 150 THEN 50 ELSE 90 END) FROM t WHERE g = 'a'",
            "SELECT percentile(g, 50) FROM t",
        ] {
            let e = pct(&c, sql).unwrap_err().to_string();
            assert!(e.contains("percentile(value, p)"), "{sql}: {e}");
        }
    }
}
