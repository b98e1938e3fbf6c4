//! Seals on rows: edits of sealed columns and filled nulls refused, unsealed columns free to change, another
//! key's seals refused, workspaces apart, and every sealed table verified.

use crate::helpers::*;
use fiscus_store::sealed_tables::{self, Unsealed};
use fiscus_store::seals;
use fiscus_store::{Store, StoreError, WriteTx};

/// A row of the `actions` table written here with plain SQL and sealed with the store's own primitive: these
/// tests hold the seal, not the actions' repository (which `fiscus-actions` tests with its own rows).
struct SealedRow {
    id: String,
}

async fn sealed_action(db: &Store, t: &fiscus_domain::tenancy::Tenant) -> SealedRow {
    let id = fiscus_domain::ids::new_id("act");
    let mut tx: WriteTx = db.begin().await.expect("begin");
    sqlx::query(
        "INSERT INTO actions (workspace_id, id, environment, kind, amount_minor, currency, counterparty, connector, \
         execution_mode, delegation_id, risk_tier, reference, required_checks, metadata, envelope_hash, control_state, \
         origin, proposed_by_kind, proposed_by_id, created_at, updated_at) \
         VALUES ($1, $2, $3, 'payment', 125000, 'EUR', 'cp_acme', 'sandbox', 'human_approved', NULL, 'T1', 'INV-1', \
         '[\"sanctions\"]', '{}', 'sha256:00', 'draft', 'application', 'application', 'app_test', $4, $4)",
    )
    .bind(&t.workspace_id)
    .bind(&id)
    .bind(t.environment.as_str())
    .bind(NOW)
    .execute(tx.conn())
    .await
    .expect("insert an action row");
    seals::seal(&mut tx, &seals::ACTIONS, &t.workspace_id, &id).await.expect("seal");
    tx.commit().await.expect("commit");
    SealedRow { id }
}

#[tokio::test]
async fn check_refuses_a_row_whose_sealed_column_was_edited() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = sealed_action(&db, &t).await;
    exec(&db, "UPDATE actions SET amount_minor = 1 WHERE id = $1", &a.id).await;
    let mut conn = db.read().await.expect("conn");
    let result = seals::check(&mut conn, db.seal_key(), &seals::ACTIONS, &t.workspace_id, "id", &a.id).await;
    assert!(matches!(&result, Err(StoreError::Tampered(m)) if m.contains(&a.id)), "{result:?}");
}

#[tokio::test]
async fn check_refuses_an_edited_text_column_and_a_filled_null() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let edited = sealed_action(&db, &t).await;
    let nulled = sealed_action(&db, &t).await;
    exec(&db, "UPDATE actions SET counterparty = 'cp_mallory' WHERE id = $1", &edited.id).await;
    exec(&db, "UPDATE actions SET delegation_id = 'dlg_x' WHERE id = $1", &nulled.id).await;
    let mut conn = db.read().await.expect("conn");
    for id in [&edited.id, &nulled.id] {
        let result = seals::check(&mut conn, db.seal_key(), &seals::ACTIONS, &t.workspace_id, "id", id).await;
        assert!(matches!(result, Err(StoreError::Tampered(_))), "{id}: {result:?}");
    }
}

#[tokio::test]
async fn an_unsealed_column_may_change_without_breaking_the_seal() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = sealed_action(&db, &t).await;
    exec(&db, "UPDATE actions SET control_state = 'approved', updated_at = updated_at + 1 WHERE id = $1", &a.id).await;
    let mut conn = db.read().await.expect("conn");
    seals::check(&mut conn, db.seal_key(), &seals::ACTIONS, &t.workspace_id, "id", &a.id).await.expect("still sealed");
}

#[tokio::test]
async fn a_seal_made_with_another_key_does_not_verify() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = sealed_action(&db, &t).await;
    let other_key = fiscus_domain::integrity::SealKey::derive(b"another server key");
    let mut conn = db.read().await.expect("conn");
    let result = seals::check(&mut conn, &other_key, &seals::ACTIONS, &t.workspace_id, "id", &a.id).await;
    assert!(matches!(result, Err(StoreError::Tampered(_))), "{result:?}");
}

#[tokio::test]
async fn check_of_another_workspace_reads_none_of_its_rows() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = sealed_action(&db, &t).await;
    exec(&db, "UPDATE actions SET amount_minor = 1 WHERE id = $1", &a.id).await;
    let other = workspace(&db).await;
    let mut conn = db.read().await.expect("conn");
    // The tampered row is not the other workspace's: checking there finds nothing to refuse.
    seals::check(&mut conn, db.seal_key(), &seals::ACTIONS, &other, "id", &a.id).await.expect("nothing to check");
}

#[tokio::test]
async fn seal_reseals_a_row_and_refuses_a_row_of_another_workspace() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = sealed_action(&db, &t).await;
    exec(&db, "UPDATE actions SET amount_minor = 1 WHERE id = $1", &a.id).await;
    let other = workspace(&db).await;
    let mut tx: WriteTx = db.begin().await.expect("begin");
    assert_not_found(seals::seal(&mut tx, &seals::ACTIONS, &other, &a.id).await);
    seals::seal(&mut tx, &seals::ACTIONS, &t.workspace_id, &a.id).await.expect("seal");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    seals::check(&mut conn, db.seal_key(), &seals::ACTIONS, &t.workspace_id, "id", &a.id).await.expect("resealed");
}

#[tokio::test]
async fn verify_workspace_counts_every_sealed_row_and_names_the_failures() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let edited = sealed_action(&db, &t).await;
    let stripped = sealed_action(&db, &t).await;
    let edited_evidence = evidence(&db, &t, "security").await; // two more sealed rows
    evidence(&db, &t, "security").await;
    let other = tenant(&db).await;
    sealed_action(&db, &other).await;
    let mut conn = db.read().await.expect("conn");
    assert_eq!(
        sealed_tables::verify_workspace(&mut conn, db.seal_key(), &t.workspace_id).await.expect("verify"),
        (4, vec![])
    );
    drop(conn);
    exec(&db, "UPDATE actions SET reference = 'INV-2' WHERE id = $1", &edited.id).await;
    exec(&db, "UPDATE actions SET seal_mac = NULL WHERE id = $1", &stripped.id).await;
    exec(&db, "UPDATE autonomy_evidence SET title = 'Edited' WHERE id = $1", &edited_evidence).await;
    let mut conn = db.read().await.expect("conn");
    let (checked, mut failures) =
        sealed_tables::verify_workspace(&mut conn, db.seal_key(), &t.workspace_id).await.expect("verify");
    assert_eq!(checked, 4);
    failures.sort_by(|a, b| (a.table, &a.id).cmp(&(b.table, &b.id)));
    assert_eq!(
        failures,
        vec![
            Unsealed { table: "actions", id: edited.id.clone(), missing: false },
            Unsealed { table: "actions", id: stripped.id.clone(), missing: true },
            Unsealed { table: "autonomy_evidence", id: edited_evidence.clone(), missing: false },
        ]
    );
    // The other workspace's rows were neither counted nor touched.
    assert_eq!(
        sealed_tables::verify_workspace(&mut conn, db.seal_key(), &other.workspace_id).await.expect("verify"),
        (1, vec![])
    );
}

#[tokio::test]
async fn every_sealed_table_is_verified() {
    assert_eq!(sealed_tables::ALL.len(), 63);
    let names: Vec<&str> = sealed_tables::ALL.iter().map(|t| t.table).collect();
    for table in [
        "actions",
        "action_checks",
        "action_decisions",
        "autonomy_evidence",
        "settlement_records",
        "delegations",
        "machine_identities",
        "agent_requests",
        "execution_clients",
        "execution_client_decisions",
        "tool_invocations",
        "webhook_endpoints",
        "a2a_tasks",
        "datasets",
        "dataset_quality",
        "lineage_exports",
        "compute_jobs",
        "compute_results",
        "research_snapshots",
        "investment_records",
        "investment_universes",
        "model_portfolios",
        "governed_ai_operations",
        "collateral_policies",
        "lqm_models",
        "lqm_contracts",
        "lqm_retraining_requests",
        "lqm_retraining_submissions",
        "lqm_checkpoints",
        "lqm_evaluations",
        "lqm_evidence_packets",
        "lqm_publications",
        "lqm_promotions",
        "qlms",
        "qlm_versions",
        "qlm_runs",
        "workflows",
        "workflow_versions",
        "workflow_runs",
        "workflow_run_steps",
        "workflow_campaigns",
        "workflow_proofs",
        "workflow_tool_grants",
        "workflow_gateway_tasks",
        "agent_spaces",
        "agent_space_versions",
        "agent_space_decisions",
        "agent_runs",
        "agent_run_calls",
        "client_calls",
        "call_recordings",
        "call_consents",
        "call_transcripts",
        "counterparties",
        "bank_account_versions",
        "payment_instructions",
        "payment_files",
        "bank_messages",
        "statement_entries",
        "approval_policies",
        "action_requirements",
        "decision_contexts",
        "approval_batches",
    ] {
        assert!(names.contains(&table), "{table} is not verified");
    }
    // And every table the schema gives a seal is in the registry (a new sealed table cannot be forgotten).
    let db = fresh_store().await;
    let sql = match db.backend() {
        fiscus_store::Backend::Sqlite => {
            "SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' AND p.name = 'seal_mac'"
        }
        fiscus_store::Backend::Postgres => {
            "SELECT table_name::text FROM information_schema.columns WHERE column_name = 'seal_mac' AND table_schema = current_schema()"
        }
    };
    let mut conn = db.read().await.expect("conn");
    let sealed: Vec<(String,)> = sqlx::query_as(sql).fetch_all(&mut *conn).await.expect("schema");
    assert!(!sealed.is_empty());
    for (table,) in sealed {
        assert!(names.contains(&table.as_str()), "{table} has a seal but is not in sealed_tables::ALL");
    }
    for t in sealed_tables::ALL {
        // The row's text key comes first (it names failures): `id`, `uid` where the public id is an integer
        // (universes), or `dataset_id` for the one quality report of a dataset.
        let first = t.columns.first().copied();
        assert!(
            matches!(first, Some("id" | "uid" | "dataset_id")),
            "{}: the key comes first (it names failures)",
            t.table
        );
        assert!(t.columns.contains(&"workspace_id"), "{}: the seal binds the workspace", t.table);
    }
}
