//! The reports of `init`, `doctor` and `layouts`, and the server's role
//! in its cluster.

use serde::Serialize;

/// The result of `init`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct InitReport {
    pub database: String,
    pub table: String,
    pub statements: Vec<String>,
    pub executed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Ok,
    Warning,
    Failed,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Check {
    pub name: &'static str,
    pub status: CheckStatus,
    pub detail: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DoctorReport {
    pub backend: &'static str,
    pub table: String,
    /// The layout (preset) the table was read with.
    pub layout: String,
    pub ok: bool,
    pub checks: Vec<Check>,
    /// Whether warnings fail the gate (`--strict`), as they then do in
    /// the JUnit report and the CI annotations.
    #[serde(skip)]
    pub strict: bool,
}

/// `qctl layouts`' document.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct LayoutsReport {
    pub presets: Vec<crate::presets::PresetInfo>,
    /// Set when one preset was asked for: its notes are shown in full.
    #[serde(skip)]
    pub detailed: bool,
}

/// What the server qctl talks to is in a replicated or clustered setup:
/// its role, and what that role says about the counts it gives and the
/// writes it takes.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ServerRole {
    /// `primary` (takes writes; PostgreSQL with or without standbys,
    /// MySQL/MariaDB), `standby` (a PostgreSQL server in recovery: reads
    /// only, its counts as old as its replay), `node` (a Galera cluster's
    /// node), or `embedded` (SQLite).
    pub role: &'static str,
    /// The `host:port` that answered, where a URL lists several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// On a standby: how far its replay is behind (0 when it has
    /// replayed all it received), whether replay is paused, and the
    /// primary it streams from (`sender_host:sender_port`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_lag_seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_paused: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// On a primary: the standbys streaming from it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub standbys: Vec<Standby>,
    /// On a PostgreSQL primary: `synchronous_standby_names` (empty: every
    /// standby is asynchronous).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synchronous_standby_names: Option<String>,
    /// On a Galera node: the node and its cluster as the node sees them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub galera: Option<GaleraState>,
}

/// A Galera node's state (`SHOW STATUS LIKE 'wsrep_%'`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GaleraState {
    /// `wsrep_node_name`.
    pub node: String,
    /// `wsrep_local_state_comment`: `Synced` when the node applies the
    /// cluster's writes as they come; `Donor/Desynced`, `Joining`,
    /// `Joined` or `Initialized` when it lags or is not in the cluster.
    pub state: String,
    /// `wsrep_ready`: whether the node takes queries at all.
    pub ready: bool,
    /// `wsrep_cluster_status`: `Primary`, or `non-Primary` when the node
    /// lost the majority.
    pub cluster_status: String,
    /// `wsrep_cluster_size`: the nodes of the node's component.
    pub cluster_size: i64,
    /// The nodes `wsrep_cluster_address` lists (0 when it lists none).
    pub expected_size: i64,
    /// Writes received and not yet applied (`wsrep_local_recv_queue`).
    pub recv_queue: i64,
    /// The share of time replication was paused by flow control since the
    /// last reading (`wsrep_flow_control_paused`).
    pub flow_control_paused: f64,
    /// The SQL addresses of the component's nodes
    /// (`wsrep_incoming_addresses`).
    pub members: Vec<String>,
}

impl GaleraState {
    /// Whether the node's reads reflect the cluster: synced, ready, in the
    /// Primary Component.
    pub fn healthy(&self) -> bool {
        self.state == "Synced" && self.ready && self.cluster_status == "Primary"
    }
}

impl ServerRole {
    pub fn new(role: &'static str) -> ServerRole {
        ServerRole {
            role,
            host: None,
            replay_lag_seconds: None,
            replay_paused: None,
            upstream: None,
            standbys: Vec::new(),
            synchronous_standby_names: None,
            galera: None,
        }
    }

    /// Why counts read here are older than `max` (None: they are not): a
    /// standby whose replay is further behind or paused, a Galera node
    /// that lags the cluster or left it.
    pub fn behind(&self, max: std::time::Duration) -> Option<String> {
        if self.role == "standby" {
            if self.replay_paused == Some(true) {
                return Some("the standby's replay is paused".into());
            }
            return match self.replay_lag_seconds {
                Some(lag) if lag > max.as_secs_f64() => Some(format!(
                    "the standby's replay is {} behind, more than {}",
                    crate::duration::format_age(lag),
                    crate::duration::format_duration(max)
                )),
                None => Some("the standby's replay lag is unknown".into()),
                _ => None,
            };
        }
        let galera = self.galera.as_ref()?;
        (!galera.healthy()).then(|| {
            format!(
                "Galera node {} is {} ({}, receive queue {})",
                galera.node, galera.state, galera.cluster_status, galera.recv_queue
            )
        })
    }

    /// What a reader of counts read here must know, in one line; None for
    /// a server whose counts are simply current (a primary, one server).
    pub fn caveat(&self) -> Option<String> {
        let host = self
            .host
            .as_deref()
            .map(|h| format!("server {h}: "))
            .unwrap_or_default();
        if self.role == "standby" {
            let of = self
                .upstream
                .as_deref()
                .map(|u| format!(" of {u}"))
                .unwrap_or_default();
            let lag = match (self.replay_paused, self.replay_lag_seconds) {
                (Some(true), Some(lag)) => format!(
                    ", replay PAUSED {} behind: these counts are as of then",
                    crate::duration::format_age(lag)
                ),
                (Some(true), None) => ", replay PAUSED: these counts may be old".into(),
                (_, Some(lag)) if lag > 0.0 => format!(
                    ", replay {} behind: these counts are as of then",
                    crate::duration::format_age(lag)
                ),
                _ => ", replay current".into(),
            };
            return Some(format!("{host}a standby{of}{lag}"));
        }
        let galera = self.galera.as_ref()?;
        Some(if galera.healthy() {
            format!(
                "{host}Galera node {} (Synced), cluster of {}",
                galera.node, galera.cluster_size
            )
        } else {
            format!(
                "{host}Galera node {} is {} ({}, receive queue {}): its counts lag the cluster's",
                galera.node, galera.state, galera.cluster_status, galera.recv_queue
            )
        })
    }

    /// The standbys that replicate asynchronously: what a failover to one
    /// of them can lose.
    pub fn async_standbys(&self) -> Vec<&Standby> {
        self.standbys
            .iter()
            .filter(|s| s.sync_state == "async")
            .collect()
    }
}

/// A standby as its primary sees it (`pg_stat_replication`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Standby {
    pub name: String,
    pub client: Option<String>,
    pub state: Option<String>,
    /// `async`, `potential`, `sync` or `quorum`.
    pub sync_state: String,
}
