//! Autonomy evidence rows: sealed, paged and filtered by domain, invisible to other tenants, and an edit
//! breaking the seal.

use crate::helpers::*;
use fiscus_actions::tables::autonomy_evidence::{self, EvidenceRow};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::appends::{Appended, Appends};
use fiscus_store::{Store, seals};

/// An autonomy evidence row of `t` in `domain`, not yet written.
fn evidence_row(t: &Tenant, id: &str, domain: &str) -> EvidenceRow {
    EvidenceRow {
        id: id.to_string(),
        environment: t.environment.as_str().into(),
        domain: domain.into(),
        title: "Quarterly controls review".into(),
        summary: None,
        source_type: "document".into(),
        source_reference: "doc-1".into(),
        source_hash: "sha256:66".into(),
        observed_at: NOW,
        metadata: "{}".into(),
        evidence_hash: "sha256:77".into(),
        recorded_by: "app_test".into(),
        created_at: NOW,
    }
}

async fn evidence(db: &Store, t: &Tenant, domain: &str) -> EvidenceRow {
    let row = evidence_row(t, &fiscus_domain::ids::new_id("evd"), domain);
    let mut appends = Appends::new();
    autonomy_evidence::append(&mut appends, db.seal_key(), t, &row).expect("evidence appended");
    assert!(matches!(db.append(appends).await.expect("written"), Appended::Written));
    row
}

fn ids(rows: Vec<EvidenceRow>) -> Vec<String> {
    rows.into_iter().map(|r| r.id).collect()
}

#[tokio::test]
async fn evidence_reads_back_sealed_in_pages_and_by_domain() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let a = evidence(&db, &t, "financial_controls").await;
    let b = evidence(&db, &t, "legal_compliance").await;
    let c = evidence(&db, &t, "financial_controls").await;
    let mut conn = db.read().await.expect("conn");
    let all = autonomy_evidence::list(&mut conn, db.seal_key(), &t, None, None, 10).await.expect("list");
    assert_eq!(all.len(), 3);
    assert_eq!(
        (all[0].title.as_str(), all[0].summary.as_deref(), all[0].environment.as_str()),
        (a.title.as_str(), None, "sandbox")
    );
    assert_eq!(
        ids(autonomy_evidence::list(&mut conn, db.seal_key(), &t, None, None, 1).await.expect("list")),
        vec![a.id.clone(), b.id.clone()]
    );
    assert_eq!(
        ids(autonomy_evidence::list(&mut conn, db.seal_key(), &t, None, Some(&a.id), 10).await.expect("list")),
        vec![b.id.clone(), c.id.clone()]
    );
    assert_eq!(
        ids(autonomy_evidence::list(&mut conn, db.seal_key(), &t, Some("financial_controls"), None, 10)
            .await
            .expect("list")),
        vec![a.id.clone(), c.id.clone()]
    );
    assert_eq!(
        autonomy_evidence::count_by_domain(&mut conn, &t).await.expect("count"),
        vec![("financial_controls".to_string(), 2), ("legal_compliance".to_string(), 1)]
    );
    seals::check(&mut conn, db.seal_key(), &seals::AUTONOMY_EVIDENCE, &t.workspace_id, "id", &b.id)
        .await
        .expect("sealed");
}

#[tokio::test]
async fn evidence_of_another_workspace_or_environment_is_invisible() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    evidence(&db, &t, "financial_controls").await;
    for other in strangers(&db, &t).await {
        let mut conn = db.read().await.expect("conn");
        assert!(
            autonomy_evidence::list(&mut conn, db.seal_key(), &other, None, None, 10).await.expect("list").is_empty()
        );
        assert!(autonomy_evidence::count_by_domain(&mut conn, &other).await.expect("count").is_empty());
    }
}

#[tokio::test]
async fn an_edited_evidence_title_breaks_its_seal() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let e = evidence(&db, &t, "financial_controls").await;
    exec(&db, "UPDATE autonomy_evidence SET title = 'Nothing to see' WHERE id = $1", &e.id).await;
    let mut conn = db.read().await.expect("conn");
    let result = seals::check(&mut conn, db.seal_key(), &seals::AUTONOMY_EVIDENCE, &t.workspace_id, "id", &e.id).await;
    assert!(matches!(result, Err(fiscus_store::StoreError::Tampered(_))), "{result:?}");
}
