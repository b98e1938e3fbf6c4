//! Bank accounts: counterparties read sealed in their tenant only, a reference unique per tenant; versions
//! pending until decided, one pending and one active per account, an approval superseding the active
//! version, a decision taken once; an edited version refused by its seal.

use crate::helpers::*;
use fiscus_actions::rules::bank_accounts::VersionState;
use fiscus_actions::tables::bank_accounts::{self as accounts, Counterparty};
use fiscus_domain::actor::Actor;
use fiscus_domain::bank_accounts::{AccountNumber, AccountVersion, CounterpartyBody, Owner};
use fiscus_domain::banking::Iban;
use fiscus_domain::ids::new_id;
use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::Store;
use fiscus_store::sealed_records::Record;

fn counterparty(name: &str, reference: Option<&str>) -> Counterparty {
    let body = CounterpartyBody { name: name.into(), reference: reference.map(str::to_string) };
    Record {
        id: new_id("cpt"),
        body_json: serde_json::to_string(&body).expect("json"),
        content_hash: format!("sha256:{name}"),
        body,
        created_by: Actor::application("app_1"),
        created_at: NOW,
    }
}

fn version(account_id: &str, n: i64, counterparty_id: &str, iban: &str) -> Record<AccountVersion> {
    let body = AccountVersion {
        account_id: account_id.into(),
        version: n,
        owner: Owner::Counterparty,
        counterparty_id: Some(counterparty_id.into()),
        currency: Currency::parse("EUR").expect("eur"),
        holder_name: "Supplier GmbH".into(),
        number: AccountNumber::Iban(Iban::parse(iban).expect("iban")),
        bic: None,
        clearing: None,
        address: None,
    };
    Record {
        id: new_id("bav"),
        body_json: serde_json::to_string(&body).expect("json"),
        content_hash: format!("sha256:{account_id}-{n}"),
        body,
        created_by: Actor::application("app_1"),
        created_at: NOW + n,
    }
}

async fn add_counterparty(db: &Store, t: &Tenant, c: &Counterparty) -> fiscus_store::Result<()> {
    let mut tx = db.begin().await.expect("begin");
    accounts::insert_counterparty(&mut tx, t, c).await?;
    tx.commit().await.expect("commit");
    Ok(())
}

async fn add_version(db: &Store, t: &Tenant, v: &Record<AccountVersion>) -> fiscus_store::Result<()> {
    let mut tx = db.begin().await.expect("begin");
    accounts::insert_version(&mut tx, t, v).await?;
    tx.commit().await.expect("commit");
    Ok(())
}

/// A counterparty "Supplier" (with `reference`) and its EUR account's first version, pending: the
/// counterparty, the account's id and the version.
async fn first_version(
    db: &Store,
    t: &Tenant,
    reference: Option<&str>,
) -> (Counterparty, String, Record<AccountVersion>) {
    let cp = counterparty("Supplier", reference);
    add_counterparty(db, t, &cp).await.expect("counterparty");
    let account = new_id("bac");
    let v1 = version(&account, 1, &cp.id, "DE89370400440532013000");
    add_version(db, t, &v1).await.expect("v1");
    (cp, account, v1)
}

async fn decide(db: &Store, t: &Tenant, id: &str, approve: bool, by: &str) -> bool {
    let mut conn = db.read().await.expect("conn");
    let v = accounts::get_version(&mut conn, db.seal_key(), t, id).await.expect("version");
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    let done = accounts::decide(&mut tx, t, &v, approve, &Actor::operator(by), NOW + 100, Some("checked by phone"))
        .await
        .expect("decide");
    tx.commit().await.expect("commit");
    done
}

#[tokio::test]
async fn counterparties_are_read_sealed_in_their_tenant_and_a_reference_is_unique() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let acme = counterparty("Acme", Some("SUP-1"));
    add_counterparty(&db, &t, &acme).await.expect("insert");
    let plain = counterparty("Plain", None);
    add_counterparty(&db, &t, &plain).await.expect("insert");
    add_counterparty(&db, &t, &counterparty("Other", None)).await.expect("no reference is no conflict");
    assert_conflict(add_counterparty(&db, &t, &counterparty("Acme again", Some("SUP-1"))).await);
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_eq!(accounts::get_counterparty(&mut conn, key, &t, &acme.id).await.expect("get"), acme);
    let page = accounts::list_counterparties(&mut conn, key, &t, None, 2).await.expect("list");
    assert_eq!(page.len(), 3, "limit + 1");
    for other in strangers(&db, &t).await {
        assert_not_found(accounts::get_counterparty(&mut conn, key, &other, &acme.id).await);
        assert!(accounts::list_counterparties(&mut conn, key, &other, None, 10).await.expect("list").is_empty());
    }
    drop(conn);
    add_counterparty(&db, &strangers(&db, &t).await[0], &counterparty("Acme elsewhere", Some("SUP-1")))
        .await
        .expect("a reference is unique per tenant only");
    exec(&db, "UPDATE counterparties SET body = replace(body, 'Plain', 'Plane') WHERE id = $1", &plain.id).await;
    let mut conn = db.read().await.expect("conn");
    assert_tampered(accounts::get_counterparty(&mut conn, key, &t, &plain.id).await);
}

#[tokio::test]
async fn a_version_is_pending_until_decided_and_an_approval_supersedes_the_active_one() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let (cp, account, v1) = first_version(&db, &t, None).await;
    assert_conflict(add_version(&db, &t, &version(&account, 2, &cp.id, "GB29NWBK60161331926819")).await);
    assert!(decide(&db, &t, &v1.id, true, "opr_bob").await);
    assert!(!decide(&db, &t, &v1.id, false, "opr_bob").await, "a decision is taken once");
    let v2 = version(&account, 2, &cp.id, "GB29NWBK60161331926819");
    add_version(&db, &t, &v2).await.expect("v2, a change");
    assert_conflict(add_version(&db, &t, &version(&account, 2, &cp.id, "GB29NWBK60161331926819")).await);
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    let pending = accounts::versions_in(&mut conn, key, &t, VersionState::Pending).await.expect("queue");
    assert_eq!(pending.iter().map(|v| v.record.id.as_str()).collect::<Vec<_>>(), [v2.id.as_str()]);
    drop(conn);
    assert!(decide(&db, &t, &v2.id, true, "opr_carol").await);
    let mut conn = db.read().await.expect("conn");
    let all = accounts::versions_of(&mut conn, key, &t, &account).await.expect("versions");
    assert_eq!(
        all.iter().map(|v| (v.record.body.version, v.state)).collect::<Vec<_>>(),
        [(1, VersionState::Superseded), (2, VersionState::Active)]
    );
    let (by, at, note) = all[1].decision.clone().expect("decided");
    assert_eq!((by, at, note.as_deref()), (Actor::operator("opr_carol"), NOW + 100, Some("checked by phone")));
    assert_eq!(all[1].record, v2);
    assert_eq!(accounts::versions_of_counterparty(&mut conn, key, &t, &cp.id).await.expect("of cp").len(), 2);
    for other in strangers(&db, &t).await {
        assert!(accounts::versions_of(&mut conn, key, &other, &account).await.expect("versions").is_empty());
        assert_not_found(accounts::get_version(&mut conn, key, &other, &v2.id).await);
        assert!(accounts::versions_in(&mut conn, key, &other, VersionState::Active).await.expect("in").is_empty());
    }
}

#[tokio::test]
async fn a_rejected_version_leaves_the_active_one_and_an_edited_version_is_refused() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let (cp, account, v1) = first_version(&db, &t, None).await;
    assert!(decide(&db, &t, &v1.id, true, "opr_bob").await);
    let v2 = version(&account, 2, &cp.id, "GB29NWBK60161331926819");
    add_version(&db, &t, &v2).await.expect("v2");
    assert!(decide(&db, &t, &v2.id, false, "opr_bob").await);
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    let states: Vec<VersionState> =
        accounts::versions_of(&mut conn, key, &t, &account).await.expect("versions").iter().map(|v| v.state).collect();
    assert_eq!(states, [VersionState::Active, VersionState::Rejected]);
    drop(conn);
    exec(&db, "UPDATE bank_account_versions SET body = replace(body, 'DE89', 'DE00') WHERE id = $1", &v1.id).await;
    let mut conn = db.read().await.expect("conn");
    assert_tampered(accounts::get_version(&mut conn, key, &t, &v1.id).await);
}

#[tokio::test]
async fn lookups_find_a_counterparty_by_reference_own_accounts_and_active_ones_by_currency() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let (cp, _, v) = first_version(&db, &t, Some("SUP-9")).await;
    let mut own = version(&new_id("bac"), 1, &cp.id, "FR1420041010050500013M02606");
    own.body.owner = Owner::Own;
    own.body.counterparty_id = None;
    own.body_json = serde_json::to_string(&own.body).expect("json");
    add_version(&db, &t, &own).await.expect("own");
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    let found = accounts::counterparty_by_reference(&mut conn, key, &t, "SUP-9").await.expect("lookup");
    assert_eq!(found.map(|c| c.id), Some(cp.id.clone()));
    assert_eq!(accounts::counterparty_by_reference(&mut conn, key, &t, "SUP-0").await.expect("lookup"), None);
    let owned: Vec<String> =
        accounts::versions_of_own(&mut conn, key, &t).await.expect("own").into_iter().map(|v| v.record.id).collect();
    assert_eq!(owned, [own.id.clone()]);
    let euro = Currency::parse("EUR").expect("eur");
    assert!(accounts::active_for(&mut conn, key, &t, &cp.id, euro).await.expect("active").is_empty(), "pending only");
    drop(conn);
    assert!(decide(&db, &t, &v.id, true, "opr_bob").await);
    let mut conn = db.read().await.expect("conn");
    let active = accounts::active_for(&mut conn, key, &t, &cp.id, euro).await.expect("active");
    assert_eq!(active.iter().map(|v| v.record.id.as_str()).collect::<Vec<_>>(), [v.id.as_str()]);
    let dollars = Currency::parse("USD").expect("usd");
    assert!(accounts::active_for(&mut conn, key, &t, &cp.id, dollars).await.expect("active").is_empty());
    for other in strangers(&db, &t).await {
        assert_eq!(accounts::counterparty_by_reference(&mut conn, key, &other, "SUP-9").await.expect("lookup"), None);
        assert!(accounts::versions_of_own(&mut conn, key, &other).await.expect("own").is_empty());
        assert!(accounts::active_for(&mut conn, key, &other, &cp.id, euro).await.expect("active").is_empty());
    }
}
