//! Bank file benchmark for `bench/bank_files.sh`. Sets up N payments through the governed path (proposed
//! by an application, approved by a person, executed, handed to the `iso20022` connector: not timed), then
//! times the two things the connector does in bulk:
//! 1. files: the bank file worker's pass that puts every payment in `pain.001` files (at most 10,000 a
//!    file), records them and publishes them in the outbound directory;
//! 2. statement: importing one `camt.053` statement of N booked entries, each matched by its `EndToEndId`
//!    and reconciled, every action `completed`.
//!
//! `bank_files_bench [--database-url U] [--payments N]` prints one line per measurement:
//! `files <payments> <files> <seconds>` and `statement <entries> <completed> <seconds>`.

use fiscus_actions::rules::approval::Decision;
use fiscus_actions::rules::bank_accounts::ProposedDetails;
use fiscus_actions::rules::envelope::{ExecutionMode, Origin, ProposalRequest, RiskTier};
use fiscus_actions::steps::bank_accounts::{self as accounts, NewCounterparty};
use fiscus_actions::steps::decide::{Seen, decide};
use fiscus_actions::steps::execute::execute;
use fiscus_actions::steps::propose::propose;
use fiscus_actions::steps::settle::settle;
use fiscus_domain::actions::ActionKind;
use fiscus_domain::actor::Actor;
use fiscus_domain::bank_accounts::Owner;
use fiscus_domain::clock::now_micros;
use fiscus_domain::credentials::Environment;
use fiscus_domain::money::Currency;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::Settings;
use fiscus_kernel::governed::{Caller, Failure};
use fiscus_kernel::settings::BankFiles;
use fiscus_server::admin::Admin;
use std::time::Instant;

fn failed(e: Failure) -> anyhow::Error {
    anyhow::anyhow!("{e:?}")
}

fn details(owner: Owner, counterparty_id: Option<String>, holder: &str, iban: &str, bic: &str) -> ProposedDetails {
    ProposedDetails {
        owner,
        counterparty_id,
        currency: Currency::parse("EUR").expect("EUR"),
        holder_name: holder.into(),
        iban: Some(iban.into()),
        local_number: None,
        local_scheme: None,
        bic: Some(bic.into()),
        clearing_system: None,
        clearing_member: None,
        address: None,
    }
}

/// Proposes an account and has a person approve it.
async fn approved(services: &fiscus_kernel::Services, tenant: &Tenant, d: ProposedDetails) -> anyhow::Result<()> {
    let machine = Caller::bare(Actor::application("app_bench"));
    let person = Caller::bare(Actor::operator("opr_bench"));
    let mut tx = services.store.begin().await?;
    let v = accounts::propose(&mut tx, tenant, &machine, None, d).await.map_err(failed)?;
    accounts::decide(&mut tx, tenant, &person, Role::Approver, &v.record.id, true, None, &v.record.content_hash)
        .await
        .map_err(failed)?;
    tx.commit().await?;
    Ok(())
}

/// The amount of payment `i`, in cents: all different, so a statement could match them by amount too.
fn amount(i: usize) -> i64 {
    10_000 + i as i64
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut payments, mut database_url) = (10_000usize, None);
    let mut i = 0;
    while i + 1 < args.len() {
        match args[i].as_str() {
            "--payments" => payments = args[i + 1].parse()?,
            "--database-url" => database_url = Some(args[i + 1].clone()),
            other => anyhow::bail!("unknown option {other}"),
        }
        i += 2;
    }
    let dir = tempfile::tempdir()?;
    let mut settings = Settings { data_dir: dir.path().to_path_buf(), database_url, ..Settings::default() };
    settings.iso20022 = Some(BankFiles {
        outbound_dir: dir.path().join("outbound"),
        staging_dir: dir.path().join("staging"),
        inbound_dir: None,
        inbound_max_bytes: 8 * 1024 * 1024,
        initiating_party: "Fiscus Bench".into(),
        sandbox: true,
    });
    let state = fiscus_server::serve::open(settings.clone()).await?;
    let admin = Admin { store: &state.store, server_key: &state.server_key, actor: Actor::cli() };
    let ws = admin.create_workspace("Bank file bench", false).await?;
    let tenant = Tenant { workspace_id: ws.id.clone(), environment: Environment::Sandbox };

    approved(
        &state,
        &tenant,
        details(Owner::Own, None, "Fiscus Bench GmbH", "FR1420041010050500013M02606", "PSSTFRPPXXX"),
    )
    .await?;
    let machine = Caller::bare(Actor::application("app_bench"));
    let person = Caller::bare(Actor::operator("opr_approver"));
    let mut tx = state.store.begin().await?;
    let supplier = accounts::create_counterparty(
        &mut tx,
        &tenant,
        &machine,
        NewCounterparty { name: "Lieferant GmbH".into(), reference: None },
    )
    .await
    .map_err(failed)?;
    tx.commit().await?;
    let cp = Some(supplier.id.clone());
    approved(
        &state,
        &tenant,
        details(Owner::Counterparty, cp, "Lieferant GmbH", "DE89370400440532013000", "COBADEFFXXX"),
    )
    .await?;

    // Set-up, not timed: every payment proposed, approved, executed and handed over, 500 to a transaction.
    let setup = Instant::now();
    let mut ids = Vec::with_capacity(payments);
    for chunk in (0..payments).collect::<Vec<_>>().chunks(500) {
        let mut tx = state.store.begin().await?;
        for &i in chunk {
            let envelope = ProposalRequest {
                kind: ActionKind::Payment,
                amount_minor: amount(i),
                currency: Currency::parse("EUR").expect("EUR"),
                counterparty: supplier.id.clone(),
                connector: "iso20022".into(),
                execution_mode: ExecutionMode::HumanApproved,
                delegation_id: None,
                risk_tier: RiskTier::T1,
                reference: format!("INV-{i}"),
                required_checks: Vec::new(),
                metadata: None,
            }
            .validate()
            .map_err(|e| anyhow::anyhow!("{e:?}"))?;
            let loaded =
                propose(&mut tx, &settings, &tenant, &machine, envelope, Origin::Application).await.map_err(failed)?;
            let id = loaded.action.id.clone();
            let seen = Seen {
                envelope_hash: &loaded.action.envelope_hash,
                check_set_hash: &loaded.check_set_hash,
                batch_id: None,
                reason: None,
            };
            decide(&mut tx, &settings, &tenant, &person, Role::Approver, &id, Decision::Approve, &seen)
                .await
                .map_err(failed)?;
            execute(&mut tx, &settings, &tenant, &machine, &id, None).await.map_err(failed)?;
            ids.push(id);
        }
        tx.commit().await?;
    }
    let worker = Caller::bare(Actor::worker("wrk_bench"));
    loop {
        let mut tx = state.store.begin().await?;
        let jobs =
            fiscus_actions::tables::settlement::claim(&mut tx, "wrk_bench", now_micros(), 60_000_000, 500).await?;
        if jobs.is_empty() {
            break;
        }
        for job in &jobs {
            settle(&mut tx, &settings, &worker, job, state.book.as_ref()).await.map_err(failed)?;
        }
        tx.commit().await?;
    }
    // A live database's statistics are kept by its maintenance (PostgreSQL's autovacuum, which would have
    // run during a set-up this long); a fresh one planned on default statistics reads a few hundred
    // actions by id through the tenant's index instead of the primary key. Bring them up to date, as the
    // maintenance would, before the clock starts.
    let mut conn = state.store.read().await?;
    sqlx::query("ANALYZE").execute(&mut *conn).await?;
    drop(conn);
    eprintln!("set-up: {payments} payments approved and executed in {:.1} s", setup.elapsed().as_secs_f64());

    // 1. Files.
    let started = Instant::now();
    let pass = fiscus_actions::bank_files::run_once(&state, "wrk_bench").await.map_err(failed)?;
    let files_seconds = started.elapsed().as_secs_f64();
    let published = std::fs::read_dir(dir.path().join("outbound").join(&ws.id).join("sandbox"))?.count();
    anyhow::ensure!(published == pass.filed, "{} files recorded, {published} published", pass.filed);
    println!("files {payments} {} {files_seconds:.3}", pass.filed);

    // 2. A statement of every payment, booked.
    let total: i64 = (0..payments).map(amount).sum();
    let cents = |c: i64| format!("{}.{:02}", c / 100, c % 100);
    let mut xml = String::with_capacity(payments * 700);
    xml.push_str(&format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt><GrpHdr><MsgId>BENCH-1</MsgId><CreDtTm>2026-12-01T23:00:00Z</CreDtTm></GrpHdr><Stmt><Id>BENCH-1-1</Id><Acct><Id><IBAN>FR1420041010050500013M02606</IBAN></Id><Ccy>EUR</Ccy></Acct><Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">{}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-12-01</Dt></Dt></Bal><Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">0.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-12-01</Dt></Dt></Bal>"#,
        cents(total)
    ));
    for (i, id) in ids.iter().enumerate() {
        let a = cents(amount(i));
        xml.push_str(&format!(
            r#"<Ntry><Amt Ccy="EUR">{a}</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>2026-12-01</Dt></BookgDt><ValDt><Dt>2026-12-01</Dt></ValDt><AcctSvcrRef>B{i}</AcctSvcrRef><BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>ICDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd><NtryDtls><TxDtls><Refs><EndToEndId>{id}</EndToEndId></Refs><Amt Ccy="EUR">{a}</Amt><CdtDbtInd>DBIT</CdtDbtInd><RmtInf><Ustrd>INV-{i}</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>"#
        ));
    }
    xml.push_str("</Stmt></BkToCstmrStmt></Document>");
    let started = Instant::now();
    let imported = fiscus_actions::bank_messages::import(&state, &tenant, &worker, &xml).await.map_err(failed)?;
    let statement_seconds = started.elapsed().as_secs_f64();
    let completed = imported
        .message
        .body
        .items
        .iter()
        .filter(|i| i.outcome == fiscus_actions::rules::bank_files::Outcome::Completed)
        .count();
    println!("statement {payments} {completed} {statement_seconds:.3}");
    Ok(())
}
