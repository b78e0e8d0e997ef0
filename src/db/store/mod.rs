//! Writing a run's rows and reading them back (the only place that knows the
//! row layout of the typed tables besides the queries themselves): `write`
//! stores an ingest's rows and the migrations' rewrites of them, `load` reads
//! a run's records back, `pack_read` reads its requests (from the request
//! pack, in parallel segments, or from the rows).
use rusqlite::types::{Value as Sql, ValueRef};
use rusqlite::{Connection, OptionalExtension, Statement};
use serde_json::{Map, Value};

use super::pack::{self, Fields, Packer};
use super::raw::{Binder, Insert, Select};
use super::tables::{self, split, TableSpec, TABLES};
use super::DbError;
use crate::db::encode::{Field, Row};
use crate::model::transport::Contexts;
use crate::model::{Request, RunData, Scalar, Sym, SystemSample};
use crate::sql::{self, Query};

mod load;
mod pack_read;
mod write;

pub use load::*;
pub use pack_read::*;
pub use write::*;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_one_row_insert_becomes_an_insert_of_many_rows() {
        let sql = "-- A comment (with a paren).\nINSERT INTO t (a, b_2)\nVALUES (:a, :b_2);\n";
        assert_eq!(
            insert_of_rows(sql, 3).unwrap(),
            "-- A comment (with a paren).\nINSERT OR FAIL INTO t (a, b_2)\nVALUES (?, ?),\n(?, ?),\n(?, ?)"
        );
        // Anything but a tuple of named parameters is not rewritten.
        assert_eq!(insert_of_rows("INSERT INTO t VALUES (:a, 1)", 2), None);
        assert_eq!(
            insert_of_rows("INSERT INTO t VALUES (ifnull(:a, :b))", 2),
            None
        );
        assert_eq!(insert_of_rows(sql::INGEST_INSERT_RUN.sql, 2), None);
        // Every table the writer batches: the statement takes the rows'
        // parameters and stores that many rows.
        let conn = crate::db::open_memory().unwrap();
        for q in TABLES
            .iter()
            .map(|t| &t.insert)
            .chain([&sql::INGEST_INSERT_RECORD])
        {
            let one = conn.prepare(q.sql).unwrap().parameter_count();
            for rows in [ROWS_PER_INSERT, ROWS_PER_SHORT_INSERT] {
                let many = insert_of_rows(q.sql, rows).expect(q.name);
                let stmt = conn.prepare(&many).expect(q.name);
                assert_eq!(stmt.parameter_count(), one * rows, "{}", q.name);
            }
        }
    }
}
