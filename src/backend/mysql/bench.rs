//! The bench's scratch copy on MySQL and MariaDB: a copy of the queue
//! table in its database.

use anyhow::Result;
use mysql::prelude::Queryable;

use super::connect;
use super::{MysqlBackend, MysqlTarget};
use crate::db::{Access, Backend, Scratch, Session};
use crate::layout::Layout;
use crate::sql::dialect::MYSQL;

/// A copy of the queue table as it is defined (columns, defaults,
/// indexes), or what `init` creates when there is none, in the same
/// database; dropped (on a connection of its own: the main one may be
/// broken) when the scratch drops.
pub fn scratch(b: &mut MysqlBackend) -> Result<Scratch> {
    let name = crate::db::scratch_name();
    let mut layout: Layout = b.table.layout.clone();
    let scratch = match &layout.table.schema {
        Some(schema) => format!("{schema}.{name}"),
        None => name.clone(),
    };
    let original = b.table.table();
    layout.set_table(&scratch)?;
    let target = MysqlTarget {
        url: b.info.shown_raw(),
    };
    let base = b.options.clone();
    let options = move |access| base.for_bench(access);
    let copy = MYSQL.table(&layout.table);
    let remove = {
        let (info, timeout, copy) = (b.info.clone(), b.options.connect_timeout, copy.clone());
        move || {
            if let Ok(mut conn) = connect::connect(&info, timeout) {
                let _ = conn.query_drop(format!("DROP TABLE IF EXISTS {copy}"));
            }
        }
    };
    let made = if b.table_exists {
        b.run(&format!("CREATE TABLE {copy} LIKE {original}"))
    } else {
        MysqlBackend::open(&target, layout.clone(), &options(Access::Create))
            .and_then(|mut setup| crate::db::Schema::init(&mut setup))
    };
    if let Err(err) = made {
        remove();
        return Err(err);
    }
    Ok(Scratch {
        name: scratch,
        open: Box::new(move |access| -> Result<Box<dyn Backend + Send>> {
            Ok(Box::new(MysqlBackend::open(
                &target,
                layout.clone(),
                &options(access),
            )?))
        }),
        analyze: Some(format!("ANALYZE TABLE {copy}")),
        remove: Some(Box::new(remove)),
    })
}
