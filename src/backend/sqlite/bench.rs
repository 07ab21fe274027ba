//! The bench's scratch copy on SQLite: a file of its own, so the user's
//! file is never written nor its write lock taken.

use std::time::Duration;

use anyhow::Result;

use super::{SqliteBackend, SqliteTarget};
use crate::db::{Access, Backend, ConnectOptions, Scratch, Session, SqlLog};
use crate::sql::Stmt;

/// The user's table and its indexes as they are defined (or what `init`
/// would create when there is none), in a new scratch file.
pub fn scratch(b: &mut SqliteBackend) -> Result<Scratch> {
    let path = std::env::temp_dir().join(format!("{}.db", crate::db::scratch_name()));
    let target = SqliteTarget {
        path: path.clone(),
        read_only: false,
    };
    let options = |access| ConnectOptions {
        access,
        busy_timeout: Duration::from_secs(120),
        statement_timeout: Duration::from_secs(120),
        connect_timeout: Duration::from_secs(10),
        index_timeout: Duration::from_secs(3600),
        sql_log: SqlLog::default(),
        auto: None,
    };
    let mut layout = b.table.layout.clone();
    let schema_sql = if b.table_exists {
        let stmt = Stmt {
            sql: "SELECT sql FROM sqlite_master WHERE tbl_name = ?1 AND sql IS NOT NULL \
                  ORDER BY type = 'index'"
                .into(),
            binds: vec![crate::sql::Bind::Text(layout.table.name.to_string())],
        };
        crate::db::first_texts(b.query(&stmt)?)
    } else {
        Vec::new()
    };
    // A scratch file has no attached schemas.
    let table_name = layout.table.name.to_string();
    layout.set_table(&table_name)?;
    let remove = {
        let path = path.clone();
        move || {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
            }
        }
    };
    let mut setup = SqliteBackend::open(&target, layout.clone(), &options(Access::Create))?;
    let made = if schema_sql.is_empty() {
        crate::db::Schema::init(&mut setup)
    } else {
        setup
            .run_batch("PRAGMA journal_mode = WAL")
            .and_then(|()| schema_sql.iter().try_for_each(|sql| setup.run_batch(sql)))
    };
    drop(setup);
    if let Err(err) = made {
        remove();
        return Err(err);
    }
    Ok(Scratch {
        name: path.display().to_string(),
        open: Box::new(move |access| -> Result<Box<dyn Backend + Send>> {
            Ok(Box::new(SqliteBackend::open(
                &target,
                layout.clone(),
                &options(access),
            )?))
        }),
        // SQLite plans without statistics.
        analyze: None,
        remove: Some(Box::new(remove)),
    })
}
