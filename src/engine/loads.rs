//! The load ledger's questions: whether the queue table has one beside
//! it, and whether a load already committed (see [`crate::sql::loads`]).

use anyhow::Result;

use crate::db::Backend;
use crate::sql::loads::{LEDGER, LoadLedger, LoadRecord};

/// Whether the ledger table exists beside the queue table.
pub fn ledger_exists<B: Backend + ?Sized>(b: &mut B) -> Result<bool> {
    let schema = b
        .table()
        .layout
        .table
        .schema
        .as_ref()
        .map(|s| s.to_string());
    Ok(!b.column_names(schema.as_deref(), LEDGER)?.is_empty())
}

/// The ledger's record of a load, if that load committed.
pub fn find_load<B: Backend + ?Sized>(b: &mut B, load_id: &str) -> Result<Option<LoadRecord>> {
    let ledger = LoadLedger::new(b.table());
    let stmt = ledger.find(load_id);
    let row = b.query(&stmt)?.into_iter().next();
    Ok(row.map(|row| LoadLedger::new(b.table()).decode(row)))
}
