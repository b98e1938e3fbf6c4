//! Finance core: ledgers, entities and journals numbered from their counters, keyed by their natural keys
//! (each once per workspace), listed by id with exact filters, journals with their lines in order, and an
//! account's monthly movement over the chosen datasets only; another workspace sees none of it.

use crate::helpers::*;
use fiscus_data_core::rules::Kind;
use fiscus_data_core::tables as data;
use fiscus_data_core::tables::finance_core::{
    self, AccountLines, Entity, Existing, Filter, JournalLine, NewEntity, NewJournal, NewJournalLine, NewLedger,
};
use fiscus_store::Store;

/// What [`book`] wrote: the two ledgers' and three entities' ids.
struct Book {
    gl_usd: i64,
    gl_eur: i64,
    e1: i64,
    e2: i64,
    e3: i64,
}

fn line<'a>(account: &'a str, debit_minor: i64, credit_minor: i64, currency: &'a str) -> NewJournalLine<'a> {
    NewJournalLine { account, description: "posting", debit_minor, credit_minor, currency }
}

/// Ledgers (dataset 1), entities (2), journals of January and February (3) and one more of February (4).
async fn book(db: &Store, ws: &str) -> Book {
    let mut lines = Vec::new();
    let mut tx = db.begin().await.expect("begin");
    let ledgers = [
        NewLedger { code: "GL-US", name: "US ledger", currency: "USD", fingerprint: "fp-gl-us".into() },
        NewLedger { code: "GL-EU", name: "EU ledger", currency: "EUR", fingerprint: "fp-gl-eu".into() },
    ];
    let ids = finance_core::insert_ledgers(&mut tx, ws, 1, &ledgers, &mut lines).await.expect("ledgers");
    tx.commit().await.expect("commit");
    assert_lines(db, ws, Kind::Ledgers, 1, &lines).await;
    let mut all_lines = std::mem::take(&mut lines);
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[1], ids[0] + 1, "consecutive numbers from the counter");
    let (gl_usd, gl_eu) = (ids[0], ids[1]);
    let entity = |code: &'static str, status: &'static str, gl: i64| NewEntity {
        code,
        name: "Entity",
        status,
        general_ledger_id: gl,
        currency: "USD",
        country: "US",
        fingerprint: format!("fp-{code}"),
    };
    let mut tx = db.begin().await.expect("begin");
    let entities = [entity("E1", "active", gl_usd), entity("E2", "inactive", gl_usd), entity("E3", "active", gl_eu)];
    finance_core::insert_entities(&mut tx, ws, 2, &entities, &mut lines).await.expect("entities");
    tx.commit().await.expect("commit");
    assert_lines(db, ws, Kind::Entities, 2, &lines).await;
    all_lines.append(&mut lines);
    let mut conn = db.read().await.expect("conn");
    let by_code = finance_core::entities(&mut conn, ws).await.expect("entities");
    drop(conn);
    let (e1, e2, e3) = (by_code["E1"].id, by_code["E2"].id, by_code["E3"].id);
    assert_eq!((e2, e3), (e1 + 1, e1 + 2));
    let journal =
        |gl: i64, entity: i64, entry: &'static str, date: &'static str, lines: Vec<NewJournalLine<'static>>| {
            NewJournal {
                general_ledger_id: gl,
                entity_id: entity,
                entry,
                posting_date: date,
                fingerprint: format!("fp-{entry}"),
                lines,
            }
        };
    let january_february = [
        journal(gl_usd, e1, "J1", "2024-01-15", vec![line("cash", 1_000, 0, "USD"), line("revenue", 0, 1_000, "USD")]),
        journal(gl_usd, e2, "J2", "2024-01-20", vec![line("cash", 500, 0, "USD"), line("revenue", 0, 500, "USD")]),
        journal(gl_usd, e1, "J3", "2024-02-03", vec![line("expense", 200, 0, "USD"), line("cash", 0, 200, "USD")]),
        journal(gl_usd, e1, "J4", "2024-02-05", vec![line("cash", 70, 0, "EUR"), line("revenue", 0, 70, "EUR")]),
    ];
    let mut tx = db.begin().await.expect("begin");
    finance_core::insert_journals(&mut tx, ws, 3, &january_february, &mut lines).await.expect("journals");
    let later = [journal(gl_usd, e2, "J5", "2024-02-20", vec![line("cash", 40, 0, "USD"), line("fees", 0, 40, "USD")])];
    finance_core::insert_journals(&mut tx, ws, 4, &later, &mut Vec::new()).await.expect("journals");
    finance_core::insert_journals(&mut tx, ws, 5, &[], &mut lines).await.expect("no journals");
    tx.commit().await.expect("commit");
    assert_lines(db, ws, Kind::Journals, 3, &lines).await;
    all_lines.append(&mut lines);
    assert_eq!(all_lines.len(), 2 + 3 + 4 + 8, "a line per ledger, entity, journal and journal line");
    Book { gl_usd, gl_eur: gl_eu, e1, e2, e3 }
}

/// The lines an import gave are its stored rows': the dataset's content hash recomputed from them agrees.
async fn assert_lines(db: &Store, ws: &str, kind: Kind, number: i64, lines: &[String]) {
    let mut conn = db.read().await.expect("conn");
    let stored =
        data::recompute_content_hash(&mut conn, ws, kind, number, data::Sealing::Lines).await.expect("recompute");
    assert_eq!(stored, data::content_hash(lines.to_vec()), "{kind:?} {number}");
}

fn ids(entities: &[Entity]) -> Vec<i64> {
    entities.iter().map(|e| e.id).collect()
}

#[tokio::test]
async fn ledgers_entities_and_journals_are_keyed_by_their_natural_keys_once_per_workspace() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let ws = &t.workspace_id;
    let b = book(&db, ws).await;
    let mut conn = db.read().await.expect("conn");
    let ledgers = finance_core::ledgers(&mut conn, ws).await.expect("ledgers");
    assert_eq!(ledgers.len(), 2);
    assert_eq!(ledgers["GL-US"], Existing { id: b.gl_usd, fingerprint: "fp-gl-us".into() });
    assert_eq!(ledgers["GL-EU"], Existing { id: b.gl_eur, fingerprint: "fp-gl-eu".into() });
    let entities = finance_core::entities(&mut conn, ws).await.expect("entities");
    assert_eq!(entities.len(), 3);
    assert_eq!(entities["E2"], Existing { id: b.e2, fingerprint: "fp-E2".into() });
    let journals = finance_core::journals(&mut conn, ws).await.expect("journals");
    assert_eq!(journals.len(), 5);
    let j1 = &journals[&format!("{}/J1", b.gl_usd)];
    assert_eq!(j1.fingerprint, "fp-J1");
    assert_eq!(journals[&format!("{}/J5", b.gl_usd)].id, journals[&format!("{}/J4", b.gl_usd)].id + 1);
    // Another workspace sees nothing, and may use the same codes.
    let other = workspace(&db).await;
    assert!(finance_core::ledgers(&mut conn, &other).await.expect("ledgers").is_empty());
    assert!(finance_core::entities(&mut conn, &other).await.expect("entities").is_empty());
    assert!(finance_core::journals(&mut conn, &other).await.expect("journals").is_empty());
    drop(conn);
    let same_code = [NewLedger { code: "GL-US", name: "Theirs", currency: "USD", fingerprint: "fp".into() }];
    let mut tx = db.begin().await.expect("begin");
    let theirs = finance_core::insert_ledgers(&mut tx, &other, 9, &same_code, &mut Vec::new()).await.expect("theirs");
    tx.commit().await.expect("commit");
    assert!(theirs[0] > b.gl_eur, "ledger numbers are global");
    let mut tx = db.begin().await.expect("begin");
    assert!(finance_core::insert_ledgers(&mut tx, ws, 9, &[], &mut Vec::new()).await.expect("none").is_empty());
    assert_conflict(finance_core::insert_ledgers(&mut tx, ws, 9, &same_code, &mut Vec::new()).await);
    drop(tx);
    let mut tx = db.begin().await.expect("begin");
    let again = [NewEntity {
        code: "E1",
        name: "Again",
        status: "active",
        general_ledger_id: b.gl_usd,
        currency: "USD",
        country: "US",
        fingerprint: "fp".into(),
    }];
    assert_conflict(finance_core::insert_entities(&mut tx, ws, 9, &again, &mut Vec::new()).await);
    drop(tx);
    let mut tx = db.begin().await.expect("begin");
    let twice = [NewJournal {
        general_ledger_id: b.gl_usd,
        entity_id: b.e1,
        entry: "J1",
        posting_date: "2024-03-01",
        fingerprint: "fp".into(),
        lines: vec![line("cash", 1, 0, "USD")],
    }];
    assert_conflict(finance_core::insert_journals(&mut tx, ws, 9, &twice, &mut Vec::new()).await);
}

#[tokio::test]
async fn entities_list_by_id_with_exact_filters_and_a_cursor() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let ws = &t.workspace_id;
    let b = book(&db, ws).await;
    let mut conn = db.read().await.expect("conn");
    let all = finance_core::list_entities(&mut conn, ws, &Filter::default(), 10).await.expect("list");
    assert_eq!(ids(&all), vec![b.e1, b.e2, b.e3]);
    assert!(fiscus_domain::ids::is_id_of("ent", &all[0].uid));
    assert_eq!(
        all[1],
        Entity {
            id: b.e2,
            uid: all[1].uid.clone(),
            code: "E2".into(),
            name: "Entity".into(),
            status: "inactive".into(),
            general_ledger_id: b.gl_usd,
            currency: "USD".into(),
            country: "US".into(),
            dataset_number: 2,
        }
    );
    let page = finance_core::list_entities(&mut conn, ws, &Filter::default(), 1).await.expect("list");
    assert_eq!(ids(&page), vec![b.e1, b.e2], "limit + 1");
    let after = Filter { after_id: Some(b.e1), ..Filter::default() };
    assert_eq!(ids(&finance_core::list_entities(&mut conn, ws, &after, 10).await.expect("list")), vec![b.e2, b.e3]);
    let inactive = Filter { status: Some("inactive"), ..Filter::default() };
    assert_eq!(ids(&finance_core::list_entities(&mut conn, ws, &inactive, 10).await.expect("list")), vec![b.e2]);
    let eu = Filter { general_ledger_id: Some(b.gl_eur), ..Filter::default() };
    assert_eq!(ids(&finance_core::list_entities(&mut conn, ws, &eu, 10).await.expect("list")), vec![b.e3]);
    let uid = Filter { uid: Some(&all[0].uid), ..Filter::default() };
    assert_eq!(ids(&finance_core::list_entities(&mut conn, ws, &uid, 10).await.expect("list")), vec![b.e1]);
    let active_us = Filter { status: Some("active"), general_ledger_id: Some(b.gl_usd), ..Filter::default() };
    assert_eq!(ids(&finance_core::list_entities(&mut conn, ws, &active_us, 10).await.expect("list")), vec![b.e1]);
    let other = workspace(&db).await;
    assert!(finance_core::list_entities(&mut conn, &other, &Filter::default(), 10).await.expect("list").is_empty());
    assert!(finance_core::list_entities(&mut conn, &other, &uid, 10).await.expect("list").is_empty());
}

#[tokio::test]
async fn journals_list_by_id_each_with_its_lines_in_order() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let ws = &t.workspace_id;
    let b = book(&db, ws).await;
    let mut conn = db.read().await.expect("conn");
    let all = finance_core::list_journals(&mut conn, ws, &Filter::default(), 10).await.expect("list");
    let entries: Vec<&str> = all.iter().map(|(j, _)| j.entry.as_str()).collect();
    assert_eq!(entries, vec!["J1", "J2", "J3", "J4", "J5"]);
    let (j3, j3_lines) = &all[2];
    assert_eq!(
        (j3.general_ledger_id, j3.entity_id, j3.posting_date.as_str(), j3.status.as_str(), j3.dataset_number),
        (b.gl_usd, b.e1, "2024-02-03", "posted", 3)
    );
    assert!(fiscus_domain::ids::is_id_of("jnl", &j3.uid));
    assert_eq!(
        j3_lines,
        &vec![
            JournalLine {
                journal_id: j3.id,
                line_no: 1,
                account: "expense".into(),
                description: "posting".into(),
                debit_minor: 200,
                credit_minor: 0,
                currency: "USD".into(),
            },
            JournalLine {
                journal_id: j3.id,
                line_no: 2,
                account: "cash".into(),
                description: "posting".into(),
                debit_minor: 0,
                credit_minor: 200,
                currency: "USD".into(),
            },
        ]
    );
    assert!(all.iter().all(|(j, lines)| lines.len() == 2 && lines.iter().all(|l| l.journal_id == j.id)));
    let page = finance_core::list_journals(&mut conn, ws, &Filter::default(), 1).await.expect("list");
    assert_eq!(page.iter().map(|(j, _)| j.id).collect::<Vec<_>>(), vec![all[0].0.id, all[1].0.id]);
    let after = Filter { after_id: Some(all[3].0.id), ..Filter::default() };
    let rest = finance_core::list_journals(&mut conn, ws, &after, 10).await.expect("list");
    assert_eq!((rest.len(), rest[0].0.entry.as_str(), rest[0].1.len()), (1, "J5", 2));
    let eu = Filter { general_ledger_id: Some(b.gl_eur), ..Filter::default() };
    assert!(finance_core::list_journals(&mut conn, ws, &eu, 10).await.expect("list").is_empty());
    let by_uid = Filter { uid: Some(&j3.uid), status: Some("posted"), ..Filter::default() };
    let one = finance_core::list_journals(&mut conn, ws, &by_uid, 10).await.expect("list");
    assert_eq!(one, vec![all[2].clone()]);
    let other = workspace(&db).await;
    assert!(finance_core::list_journals(&mut conn, &other, &Filter::default(), 10).await.expect("list").is_empty());
}

#[tokio::test]
async fn an_account_moves_by_month_over_the_chosen_datasets_and_currency_only() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let ws = &t.workspace_id;
    let b = book(&db, ws).await;
    let mut conn = db.read().await.expect("conn");
    let cash = AccountLines { general_ledger_id: b.gl_usd, account: "cash", entity_id: None };
    assert_eq!(
        finance_core::account_datasets(&mut conn, ws, &cash).await.expect("datasets"),
        vec![(3, "EUR".to_string()), (3, "USD".to_string()), (4, "USD".to_string())]
    );
    let e2_cash = AccountLines { entity_id: Some(b.e2), ..cash.clone() };
    assert_eq!(
        finance_core::account_datasets(&mut conn, ws, &e2_cash).await.expect("datasets"),
        vec![(3, "USD".to_string()), (4, "USD".to_string())]
    );
    type Case = (AccountLines<'static>, &'static str, Vec<i64>, Option<&'static str>, Option<&'static str>);
    let cases: Vec<(Case, Vec<(&str, i64)>)> = vec![
        ((cash.clone(), "USD", vec![3], None, None), vec![("2024-01", 1_500), ("2024-02", -200)]),
        ((cash.clone(), "USD", vec![3, 4], None, None), vec![("2024-01", 1_500), ("2024-02", -160)]),
        ((cash.clone(), "USD", vec![4], None, None), vec![("2024-02", 40)]),
        ((cash.clone(), "EUR", vec![3, 4], None, None), vec![("2024-02", 70)]),
        (
            (cash.clone(), "USD", vec![3, 4], Some("2024-01-16"), Some("2024-02-03")),
            vec![("2024-01", 500), ("2024-02", -200)],
        ),
        ((e2_cash.clone(), "USD", vec![3, 4], None, None), vec![("2024-01", 500), ("2024-02", 40)]),
        ((cash.clone(), "USD", vec![], None, None), vec![]),
        ((cash.clone(), "GBP", vec![3, 4], None, None), vec![]),
    ];
    for ((a, currency, datasets, start, end), expected) in cases {
        let got = finance_core::account_movements(&mut conn, ws, &a, currency, &datasets, start, end)
            .await
            .expect("movements");
        let expected: Vec<(String, i64)> = expected.into_iter().map(|(m, v)| (m.to_string(), v)).collect();
        assert_eq!(got, expected, "{currency} {datasets:?} {start:?}..{end:?} entity {:?}", a.entity_id);
    }
    let revenue = AccountLines { general_ledger_id: b.gl_usd, account: "revenue", entity_id: Some(b.e1) };
    assert_eq!(
        finance_core::account_movements(&mut conn, ws, &revenue, "USD", &[3, 4], None, None).await.expect("revenue"),
        vec![("2024-01".to_string(), -1_000)]
    );
    let eu_cash = AccountLines { general_ledger_id: b.gl_eur, account: "cash", entity_id: None };
    assert!(finance_core::account_datasets(&mut conn, ws, &eu_cash).await.expect("datasets").is_empty());
    let other = workspace(&db).await;
    assert!(finance_core::account_datasets(&mut conn, &other, &cash).await.expect("datasets").is_empty());
    assert!(
        finance_core::account_movements(&mut conn, &other, &cash, "USD", &[3, 4], None, None)
            .await
            .expect("movements")
            .is_empty()
    );
}
