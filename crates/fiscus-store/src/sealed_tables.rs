//! The registry of every sealed table, and the check of a whole workspace against it (`fiscus verify`). It sits
//! above the repositories (it names each one's tables), so `seals`, the primitive every repository seals and
//! checks rows with, depends on none of them.

use crate::seals::*;
use crate::{Result, StoreError};
use fiscus_domain::integrity::{SealKey, matches};
use sqlx::{AnyConnection, Row};

/// Every sealed table, for verification.
pub const ALL: [SealedTable; 63] = [
    ACTIONS,
    ACTION_CHECKS,
    ACTION_DECISIONS,
    AUTONOMY_EVIDENCE,
    SETTLEMENT_RECORDS,
    DELEGATIONS,
    MACHINE_IDENTITIES,
    AGENT_REQUESTS,
    EXECUTION_CLIENTS,
    EXECUTION_CLIENT_DECISIONS,
    TOOL_INVOCATIONS,
    WEBHOOK_ENDPOINTS,
    A2A_TASKS,
    crate::data_tables::DATASETS_SEALED,
    crate::data_tables::DATASET_QUALITY_SEALED,
    crate::data_tables::LINEAGE_EXPORTS_SEALED,
    crate::model_tables::COMPUTE_JOBS_SEALED,
    crate::model_tables::COMPUTE_RESULTS_SEALED,
    crate::model_tables::SNAPSHOTS_SEALED,
    crate::investment_tables::INVESTMENT_RECORDS_SEALED,
    crate::investment_tables::UNIVERSES_SEALED,
    crate::investment_tables::MODEL_PORTFOLIOS_SEALED,
    crate::investment_tables::OPERATIONS_SEALED,
    crate::investment_tables::COLLATERAL_SEALED,
    crate::model_tables::MODELS_SEALED,
    crate::model_tables::CONTRACTS_SEALED,
    crate::model_tables::REQUESTS_SEALED,
    crate::model_tables::SUBMISSIONS_SEALED,
    crate::model_tables::CHECKPOINTS_SEALED,
    crate::model_tables::EVALUATIONS_SEALED,
    crate::model_tables::EVIDENCE_PACKETS_SEALED,
    crate::model_tables::PUBLICATIONS_SEALED,
    crate::model_tables::PROMOTIONS_SEALED,
    crate::model_tables::QLMS_SEALED,
    crate::model_tables::QLM_VERSIONS_SEALED,
    crate::model_tables::QLM_RUNS_SEALED,
    crate::agent_tables::WORKFLOWS_SEALED,
    crate::agent_tables::WORKFLOW_VERSIONS_SEALED,
    crate::agent_tables::WORKFLOW_RUNS_SEALED,
    crate::agent_tables::WORKFLOW_STEPS_SEALED,
    crate::agent_tables::CAMPAIGNS_SEALED,
    crate::agent_tables::PROOFS_SEALED,
    crate::agent_tables::GRANTS_SEALED,
    crate::agent_tables::TASKS_SEALED,
    crate::agent_tables::SPACES_SEALED,
    crate::agent_tables::SPACE_VERSIONS_SEALED,
    crate::agent_tables::SPACE_DECISIONS_SEALED,
    crate::agent_tables::SPACE_RUNS_SEALED,
    crate::agent_tables::SPACE_CALLS_SEALED,
    crate::agent_tables::CALLS_SEALED,
    crate::payment_tables::COUNTERPARTIES,
    crate::payment_tables::BANK_ACCOUNT_VERSIONS,
    crate::payment_tables::PAYMENT_INSTRUCTIONS,
    crate::payment_tables::PAYMENT_FILES,
    crate::payment_tables::BANK_MESSAGES,
    crate::payment_tables::STATEMENT_ENTRIES,
    crate::payment_tables::APPROVAL_POLICIES,
    crate::payment_tables::ACTION_REQUIREMENTS,
    crate::payment_tables::DECISION_CONTEXTS,
    crate::payment_tables::APPROVAL_BATCHES,
    crate::agent_tables::RECORDINGS_SEALED,
    crate::agent_tables::CONSENTS_SEALED,
    crate::agent_tables::TRANSCRIPTS_SEALED,
];

/// A sealed row that does not match its MAC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsealed {
    pub table: &'static str,
    pub id: String,
    /// No MAC at all (written before seals existed, or stripped), rather than a wrong one.
    pub missing: bool,
}

/// The next page of a workspace's rows of `table` after the key `after` (which it moves past the page),
/// paged by the first sealed column, the row's text key (`id`, or `uid` where the public id is an integer).
async fn page(
    conn: &mut AnyConnection,
    table: &SealedTable,
    workspace_id: &str,
    after: &mut String,
) -> Result<Vec<sqlx::any::AnyRow>> {
    const PAGE: i64 = 1000;
    let first = table.columns[0];
    let rows = sqlx::query(&format!(
        "{} ORDER BY {first} LIMIT $3",
        select(table, &format!("workspace_id = $1 AND {first} > $2"))
    ))
    .bind(workspace_id)
    .bind(&*after)
    .bind(PAGE)
    .fetch_all(&mut *conn)
    .await?;
    if let Some(last) = rows.last() {
        *after = last.try_get::<String, _>(0).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    }
    Ok(rows)
}

/// Checks every sealed row of a workspace, page by page; returns the rows that fail and how many were read.
pub async fn verify_workspace(
    conn: &mut AnyConnection,
    key: &SealKey,
    workspace_id: &str,
) -> Result<(u64, Vec<Unsealed>)> {
    let mut checked = 0u64;
    let mut failures = Vec::new();
    for table in ALL {
        let mut after = String::new();
        loop {
            let rows = page(conn, &table, workspace_id, &mut after).await?;
            if rows.is_empty() {
                break;
            }
            for row in &rows {
                let (columns, mac) = decode(&table, row)?;
                checked += 1;
                if !matches(mac.as_deref(), &key.row(table.table, &columns)) {
                    failures.push(Unsealed { table: table.table, id: id_of(&columns), missing: mac.is_none() });
                }
            }
        }
    }
    Ok((checked, failures))
}

/// A sealed row or audit event whose current content has no leaf in its workspace's transparency log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unlogged {
    pub kind: String,
    pub id: String,
}

/// Checks that every sealed row and every audit event of a workspace has a leaf in its log naming its
/// current content (a re-sealed row's latest version; `fiscus_domain::tlog::row_content`); returns the ones
/// that do not and how many were read. Seals are not checked here (`verify_workspace` does): this is what an
/// outsider's proof would be missing.
pub async fn unlogged(
    conn: &mut AnyConnection,
    ev: &mut crate::EvidenceConn,
    workspace_id: &str,
) -> Result<(u64, Vec<Unlogged>)> {
    const PAGE: i64 = 1000;
    let mut checked = 0u64;
    let mut missing = Vec::new();
    for table in ALL {
        let mut after = String::new();
        loop {
            let rows = page(conn, &table, workspace_id, &mut after).await?;
            if rows.is_empty() {
                break;
            }
            let mut hashes: Vec<(String, String)> = Vec::with_capacity(rows.len());
            for row in &rows {
                let (columns, _) = decode(&table, row)?;
                hashes.push((id_of(&columns), fiscus_domain::tlog::row_content(&columns).1));
            }
            let ids: Vec<&str> = hashes.iter().map(|(id, _)| id.as_str()).collect();
            let leaves = crate::tlog::find_many(conn, ev, workspace_id, &ids, i64::MAX).await?;
            for (id, hash) in hashes {
                checked += 1;
                let logged = leaves.get(&id).is_some_and(|ls| {
                    ls.iter().rev().find(|l| l.leaf.kind == table.table).is_some_and(|l| l.leaf.record_hash == hash)
                });
                if !logged {
                    missing.push(Unlogged { kind: table.table.to_string(), id });
                }
            }
        }
    }
    let mut after_seq = 0;
    loop {
        let events = crate::audit::events_after(conn, workspace_id, after_seq, PAGE).await?;
        let Some(last) = events.last() else { break };
        after_seq = last.event.seq;
        let ids: Vec<String> = events.iter().map(|e| fiscus_domain::tlog::audit_event_id(e.event.seq)).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let leaves = crate::tlog::find_many(conn, ev, workspace_id, &refs, i64::MAX).await?;
        for (e, id) in events.iter().zip(ids) {
            checked += 1;
            let logged = leaves.get(&id).is_some_and(|ls| {
                ls.iter().any(|l| l.leaf.kind == fiscus_domain::tlog::AUDIT_EVENT && l.leaf.record_hash == e.hash)
            });
            if !logged {
                missing.push(Unlogged { kind: fiscus_domain::tlog::AUDIT_EVENT.into(), id });
            }
        }
    }
    Ok((checked, missing))
}

/// The sealed row of `subject` whose key is `value`, and every sealed row of the workspace whose column
/// `column` is `value` in every sealed table that has such a column, seals checked: what an evidence bundle
/// gathers about one subject (an action's checks, decisions, settlements and payment instruction; a model
/// checkpoint's evaluations, evidence packets, publications and promotions).
pub async fn linked(
    conn: &mut AnyConnection,
    key: &SealKey,
    workspace_id: &str,
    subject: &SealedTable,
    column: &str,
    value: &str,
) -> Result<Vec<(&'static str, Columns)>> {
    let mut out = Vec::new();
    for table in ALL {
        let filter = if table.table == subject.table {
            format!("workspace_id = $1 AND {} = $2", table.columns[0])
        } else if table.columns.contains(&column) {
            format!("workspace_id = $1 AND {column} = $2")
        } else {
            continue;
        };
        let binds = [
            fiscus_domain::integrity::Stored::Text(workspace_id.to_string()),
            fiscus_domain::integrity::Stored::Text(value.to_string()),
        ];
        for columns in select_sealed(conn, key, &table, &filter, &binds).await? {
            out.push((table.table, columns));
        }
    }
    Ok(out)
}

/// Workspaces whose audit chain predates the transparency log (events, and not one leaf): what
/// [`backfill_log`] is for. Not scoped to a workspace: the evidence worker serves them all.
pub async fn predating_the_log(conn: &mut AnyConnection) -> Result<Vec<String>> {
    let rows: Vec<(String,)> = sqlx::query_as("SELECT workspace_id FROM audit_heads WHERE leaves = 0 AND seq > 0")
        .fetch_all(&mut *conn)
        .await?;
    Ok(rows.into_iter().map(|(w,)| w).collect())
}

/// Gives every sealed row and audit event a workspace wrote before the log existed its leaf, in `tx` (once
/// per deployment, at the upgrade): nothing if the workspace's log already has a leaf. Seals are checked as
/// the rows are read, so an edited row is refused rather than logged as genuine. Returns the leaves added.
pub async fn backfill_log(tx: &mut crate::WriteTx, workspace_id: &str) -> Result<u64> {
    let lock = crate::dialect::for_update(crate::dialect::backend_of(tx.conn()));
    let head: Option<(i64,)> = sqlx::query_as(&format!("SELECT leaves FROM audit_heads WHERE workspace_id = $1{lock}"))
        .bind(workspace_id)
        .fetch_optional(tx.conn())
        .await?;
    if head.is_none_or(|(leaves,)| leaves > 0) {
        return Ok(0);
    }
    let key = tx.seal_key().clone();
    let mut leaves = Vec::new();
    for table in ALL {
        let binds = [fiscus_domain::integrity::Stored::Text(workspace_id.to_string())];
        let filter = format!("workspace_id = $1 ORDER BY {}", table.columns[0]);
        for columns in select_sealed(tx.conn(), &key, &table, &filter, &binds).await? {
            leaves.push(leaf_of(&table, &columns)?);
        }
    }
    let mut after = 0;
    loop {
        let events = crate::audit::events_after(tx.conn(), workspace_id, after, 1000).await?;
        let Some(last) = events.last() else { break };
        after = last.event.seq;
        for e in &events {
            leaves.push((workspace_id.to_string(), fiscus_domain::tlog::Leaf::audit_event(e.event.seq, &e.hash)));
        }
    }
    let n = leaves.len() as u64;
    for (workspace, leaf) in leaves {
        crate::audit::log_record(tx, &workspace, leaf).await?;
    }
    Ok(n)
}
