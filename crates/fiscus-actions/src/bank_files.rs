//! Payment files out: the `iso20022` connector's half that runs after execution. Executed payments wait as
//! sealed instructions (`crate::steps::settle`); this puts each in exactly one `pain.001.001.09` file
//! per debtor account, currency and requested date, and publishes the file whole in the outbound
//! directory, where the bank's host-to-host agent or EBICS client collects it.
//!
//! Exactly once, whatever is killed when:
//! 1. One transaction records the file (its bytes and their SHA-256, sealed) and assigns its payments to it
//!    (guarded on `file_id IS NULL`: a payment assigned once is never assigned again).
//! 2. The bytes are written to the staging directory and synced; the file is marked `staged`.
//! 3. The staged file is renamed into the outbound directory (atomic within one filesystem) and the
//!    directory synced; the file is marked `published`.
//!
//! A file found `recorded` is written to staging again from its stored bytes (a torn write is overwritten);
//! one found `staged` is renamed if its staged copy is there (and whole), and was renamed already if not.
//! Either way the same bytes under the same name: a bank sees each payment in one file, once.

use crate::rules::bank_files::{FileBody, FileState};
use crate::tables::bank_accounts::Version;
use crate::tables::bank_files::{File, Unfiled};
use fiscus_domain::actor::Actor;
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::evidence::seal_bytes;
use fiscus_domain::tenancy::Tenant;
use fiscus_iso20022::pain001::{self, AccountId, Agent, CreditTransfer, Party, PaymentFile};
use fiscus_kernel::Services;
use fiscus_kernel::folder::{self, Folder};
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure, new_record, set_aside};
use fiscus_kernel::settings::BankFiles;
use fiscus_store::payment_tables::{PAYMENT_FILES, PAYMENT_INSTRUCTIONS};
use fiscus_store::set_aside::Bad;
use fiscus_store::{StoreError, WriteTx};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

/// What one pass did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pass {
    pub filed: usize,
    pub published: usize,
    /// Instructions and files set aside for failing their seals (or their bank details' binding).
    pub set_aside: usize,
    /// Files whose publication failed this pass (a folder that refuses it, the database): tried again at the
    /// next pass, without holding up anyone else's.
    pub held: usize,
}

/// One pass of the bank file worker: every due payment filed, every file not yet published published. A
/// record that fails its seal is set aside (`fiscus_store::set_aside`: named in the log, at the console and
/// in `/metrics`), and a file that cannot be published now waits for the next pass, so neither stops any
/// other payment of its workspace or of another (issue 54).
pub async fn run_once(services: &Services, worker: &str) -> Result<Pass, Failure> {
    let Some(cfg) = services.settings.iso20022.as_ref() else { return Ok(Pass::default()) };
    let caller = Caller::bare(Actor::worker(worker));
    let mut pass = Pass::default();
    while let Some(step) = file_one(services, cfg, &caller).await? {
        match step {
            Filed::File { published } => {
                pass.filed += 1;
                pass.held += usize::from(!published);
            }
            Filed::SetAside(n) => pass.set_aside += n,
        }
    }
    let key = services.store.seal_key().clone();
    let mut conn = services.store.read().await?;
    let (unpublished, bad) = crate::tables::bank_files::unpublished(&mut conn, &key, 64).await?;
    drop(conn);
    if !bad.is_empty() {
        let mut tx = services.store.begin().await?;
        pass.set_aside += set_aside::record(&mut tx, &caller, PAYMENT_FILES.table, &bad).await?;
        tx.commit().await?;
    }
    for (tenant, file) in unpublished {
        let id = file.record.id.clone();
        match publish(services, cfg, &caller, &tenant, file).await {
            Ok(()) => pass.published += 1,
            Err(Failure::Store(e @ StoreError::Tampered(_))) => {
                let bad = [Bad { record_id: id, tenant, reason: integrity_reason(&e) }];
                let mut tx = services.store.begin().await?;
                pass.set_aside += set_aside::record(&mut tx, &caller, PAYMENT_FILES.table, &bad).await?;
                tx.commit().await?;
            }
            Err(e) => {
                pass.held += 1;
                fiscus_kernel::once::warn_once(&format!("payment file {id}"), &format!("not published: {e:?}"));
            }
        }
    }
    Ok(pass)
}

/// What one step of filing did.
enum Filed {
    /// A file was recorded (and published, unless its folder refused it this time).
    File { published: bool },
    /// The group claimed held records that failed their seals (or a binding): this many were set aside.
    SetAside(usize),
}

/// Records one file of due payments, if any are due; `None` when none are.
async fn file_one(services: &Services, cfg: &BankFiles, caller: &Caller) -> Result<Option<Filed>, Failure> {
    let now = now_micros();
    let today = rfc3339(now)[..10].to_string();
    let mut tx = services.store.begin().await?;
    let limit = i64::try_from(pain001::MAX_PAYMENTS).unwrap_or(i64::MAX);
    let Some(claim) = crate::tables::bank_files::claim_unfiled(&mut tx, &today, limit).await? else {
        return Ok(None);
    };
    let Unfiled { tenant, debtor_account_id, mut instructions, bad } = claim;
    if !bad.is_empty() || instructions.is_empty() {
        let n = set_aside::record(&mut tx, caller, PAYMENT_INSTRUCTIONS.table, &bad).await?;
        tx.commit().await?;
        return Ok(Some(Filed::SetAside(n)));
    }
    // One debit account per file: a change of the account's details approved between two executions makes
    // two groups; the other waits for the next file.
    let debtor_version = instructions[0].record.body.debtor_version_id.clone();
    instructions.retain(|i| i.record.body.debtor_version_id == debtor_version);
    match record_file(&mut tx, cfg, caller, &tenant, debtor_account_id, debtor_version, &instructions, now).await {
        Ok(record) => {
            tx.commit().await?;
            pause_at("file-recorded");
            let file = File { record, state: FileState::Recorded, published_at: None };
            let id = file.record.id.clone();
            // Not published now (its folder refused it, say): the publishing half takes it up at every pass.
            let published = match publish(services, cfg, caller, &tenant, file).await {
                Ok(()) => true,
                Err(e) => {
                    fiscus_kernel::once::warn_once(&format!("payment file {id}"), &format!("not published: {e:?}"));
                    false
                }
            };
            Ok(Some(Filed::File { published }))
        }
        // The group's bank details fail their seals or no longer hash to what the payments bound: these
        // payments are set aside, and every other group goes on. (Only a failed seal: `Corrupt` also
        // stands for the service's own internal errors, which are retried.)
        Err(Failure::Store(e @ StoreError::Tampered(_))) => {
            drop(tx);
            let reason = integrity_reason(&e);
            let bad: Vec<Bad> = instructions
                .iter()
                .map(|i| Bad { record_id: i.record.id.clone(), tenant: tenant.clone(), reason: reason.clone() })
                .collect();
            let mut tx = services.store.begin().await?;
            let n = set_aside::record(&mut tx, caller, PAYMENT_INSTRUCTIONS.table, &bad).await?;
            tx.commit().await?;
            Ok(Some(Filed::SetAside(n)))
        }
        Err(e) => Err(e),
    }
}

fn integrity_reason(e: &StoreError) -> String {
    format!("a record failed its seal (edited outside Fiscus): {e}")
}

/// Records a file of `instructions` (one group: tenant, debit account version, currency, requested date)
/// and assigns its payments to it, in `tx`.
#[allow(clippy::too_many_arguments)]
async fn record_file(
    tx: &mut WriteTx,
    cfg: &BankFiles,
    caller: &Caller,
    tenant: &Tenant,
    debtor_account: String,
    debtor_version: String,
    instructions: &[crate::tables::bank_files::Instruction],
    now: i64,
) -> Result<fiscus_store::sealed_records::Record<FileBody>, Failure> {
    let tenant = tenant.clone();
    let key = tx.seal_key().clone();
    let debtor = bound(tx, &key, &tenant, &debtor_version, &instructions[0].record.body.debtor_hash).await?;
    let mut creditors: BTreeMap<String, Version> = BTreeMap::new();
    for i in instructions {
        let b = &i.record.body;
        if !creditors.contains_key(&b.creditor_version_id) {
            let v = bound(tx, &key, &tenant, &b.creditor_version_id, &b.creditor_hash).await?;
            creditors.insert(b.creditor_version_id.clone(), v);
        }
    }
    let file_id = fiscus_domain::ids::new_id("pmf");
    let first = &instructions[0].record.body;
    let (currency, requested_date) = (first.currency, first.requested_date.clone());
    let payments = instructions
        .iter()
        .map(|i| {
            let b = &i.record.body;
            let creditor = &creditors[&b.creditor_version_id].record.body;
            let agent = Agent::of(creditor);
            CreditTransfer {
                end_to_end_id: b.action_id.clone(),
                amount_minor: b.amount_minor,
                creditor: Party::holder(creditor),
                creditor_account: AccountId::of(creditor),
                creditor_agent: (agent.bic.is_some() || agent.clearing.is_some()).then_some(agent),
                remittance: Some(b.reference.clone()),
                category_purpose: (b.kind == fiscus_domain::actions::ActionKind::Transfer).then_some("INTC"),
            }
        })
        .collect();
    let d = &debtor.record.body;
    let document = PaymentFile {
        message_id: file_id.clone(),
        created_at: rfc3339(now),
        initiating_party: cfg.initiating_party.clone(),
        debtor: Party::holder(d),
        debtor_account: AccountId::of(d),
        debtor_agent: Agent::of(d),
        currency,
        requested_execution_date: requested_date.clone(),
        payments,
    };
    let (xml, sum) = pain001::render(&document).map_err(|e| Failure::internal(format!("pain.001: {e}")))?;
    let body = FileBody {
        name: format!("{file_id}.xml"),
        message: "pain.001.001.09".into(),
        debtor_account_id: debtor_account,
        debtor_version_id: debtor_version,
        currency,
        requested_date,
        payments: u32::try_from(instructions.len()).unwrap_or(u32::MAX),
        control_sum_minor: i64::try_from(sum).map_err(|_| Failure::internal("control sum"))?,
        sha256: seal_bytes(xml.as_bytes()),
        action_ids: instructions.iter().map(|i| i.record.body.action_id.clone()).collect(),
    };
    let mut record = new_record("payment file", "pmf", body, caller.actor.clone())?;
    record.id = file_id;
    crate::tables::bank_files::insert_file(tx, &tenant, &record, &xml).await?;
    crate::tables::bank_files::assign(tx, &tenant, instructions, &record.id).await?;
    let entry = AuditEntry::of_tenant(
        &tenant,
        Change::PaymentFileRecorded,
        &record.id,
        json!({ "sha256": record.body.sha256, "payments": record.body.payments,
                "control_sum_minor": record.body.control_sum_minor, "currency": currency.code() }),
        now,
    );
    audit(tx, caller, &entry).await?;
    Ok(record)
}

/// A version of bank details the payment is bound to, read with its seal checked, that still hashes to
/// what the instruction carries.
async fn bound(
    tx: &mut fiscus_store::WriteTx,
    key: &fiscus_domain::integrity::SealKey,
    tenant: &Tenant,
    version_id: &str,
    hash: &str,
) -> Result<Version, Failure> {
    let v = crate::tables::bank_accounts::get_version(tx.conn(), key, tenant, version_id).await?;
    if v.record.content_hash != hash {
        let what = format!("bank account version {version_id} no longer hashes to its binding");
        return Err(Failure::Store(StoreError::Tampered(what)));
    }
    Ok(v)
}

/// Takes a recorded or staged file to published (see the module's steps).
async fn publish(
    services: &Services,
    cfg: &BankFiles,
    caller: &Caller,
    tenant: &Tenant,
    file: File,
) -> Result<(), Failure> {
    let name = file.record.body.name.clone();
    let mut state = file.state;
    if state == FileState::Recorded {
        let mut conn = services.store.read().await?;
        let content = crate::tables::bank_files::content(&mut conn, tenant, &file).await?;
        drop(conn);
        let (root, tenant_, name_) = (cfg.staging_dir.clone(), tenant.clone(), name.clone());
        blocking(move || write_synced(&tenant_folder(&root, &tenant_)?, &name_, content.as_bytes())).await?;
        pause_at("file-staged");
        advance(services, tenant, &file.record.id, FileState::Recorded, FileState::Staged).await?;
        state = FileState::Staged;
        pause_at("file-staged-recorded");
    }
    if state == FileState::Staged {
        let (staging, outbound, tenant_) = (cfg.staging_dir.clone(), cfg.outbound_dir.clone(), tenant.clone());
        let (name_, sha) = (name.clone(), file.record.body.sha256.clone());
        blocking(move || {
            rename_whole(&tenant_folder(&staging, &tenant_)?, &tenant_folder(&outbound, &tenant_)?, &name_, &sha)
        })
        .await?;
        pause_at("file-renamed");
        advance(services, tenant, &file.record.id, FileState::Staged, FileState::Published).await?;
        let mut tx = services.store.begin().await?;
        let entry = AuditEntry::of_tenant(
            tenant,
            Change::PaymentFilePublished,
            &file.record.id,
            json!({ "name": name, "sha256": file.record.body.sha256 }),
            now_micros(),
        );
        audit(&mut tx, caller, &entry).await?;
        tx.commit().await?;
    }
    Ok(())
}

async fn advance(
    services: &Services,
    tenant: &Tenant,
    id: &str,
    from: FileState,
    to: FileState,
) -> Result<(), Failure> {
    let mut tx = services.store.begin().await?;
    // Another worker finishing the same file first leaves nothing to do: the guard makes it a no-op.
    crate::tables::bank_files::advance(&mut tx, tenant, id, from, to, now_micros()).await?;
    tx.commit().await?;
    Ok(())
}

/// The tenant's folder, `<root>/<workspace>/<environment>` (one bank channel per workspace and environment),
/// created when missing, reached without following a link
/// (whoever collects from or drops into these folders may have put one there: `fiscus_kernel::folder`).
fn tenant_folder(root: &Path, tenant: &Tenant) -> std::io::Result<Folder> {
    Folder::root(root)?.sub_created(&tenant.workspace_id)?.sub_created(tenant.environment.as_str())
}

async fn blocking(f: impl FnOnce() -> std::io::Result<()> + Send + 'static) -> Result<(), Failure> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Failure::internal(format!("file task: {e}")))?
        .map_err(|e| Failure::internal(format!("payment file: {e}")))
}

/// Writes `bytes` to `name` in `dir` (replacing any torn earlier attempt, never through a link) and syncs
/// the file and the folder.
fn write_synced(dir: &Folder, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = dir.create(name)?;
    if std::env::var("FISCUS_FAULT_PAUSE_AT").as_deref() == Ok("file-torn") {
        f.write_all(&bytes[..bytes.len() / 2])?;
        f.sync_all()?;
        pause_at("file-torn");
    }
    f.write_all(bytes)?;
    f.sync_all()?;
    dir.sync()
}

/// Renames a staged file into the outbound folder and syncs it. A staged file absent was renamed
/// already (its state was not yet recorded); a staged file present but not whole (it cannot be, once
/// `staged` was recorded after its sync, unless someone edited it) is refused, as is anything there that
/// is not a regular file.
fn rename_whole(staging: &Folder, outbound: &Folder, name: &str, sha256: &str) -> std::io::Result<()> {
    let bytes = match staging.read_bounded(name, MAX_FILE_BYTES) {
        Ok(b) => b,
        Err(folder::Refused::Gone) => return Ok(()),
        Err(folder::Refused::Io(e)) => return Err(e),
        Err(refused) => {
            return Err(std::io::Error::other(format!("{}/{name}: {}", staging.path().display(), refused.rule())));
        }
    };
    if seal_bytes(&bytes) != sha256 {
        return Err(std::io::Error::other(format!("{}/{name} does not hash to its record", staging.path().display())));
    }
    staging.rename(name, outbound, name)?;
    outbound.sync()
}

/// The largest payment file the staging folder is read back with: far above what `pain001::MAX_PAYMENTS`
/// payments render to, so only something that is no file of Fiscus's reaches it.
const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Checks the connector's directories at start: each can be created, and staging and outbound are on one
/// filesystem (a rename across filesystems is a copy, which a collector could see half done).
pub fn check_directories(cfg: &BankFiles) -> Result<(), String> {
    let mut devices = Vec::new();
    for dir in [&cfg.staging_dir, &cfg.outbound_dir] {
        let folder = Folder::root(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        devices.push(folder.device().map_err(|e| format!("{}: {e}", dir.display()))?);
    }
    if devices[0] != devices[1] {
        return Err("iso20022.staging_dir and iso20022.outbound_dir must be on one filesystem".into());
    }
    if let Some(inbound) = &cfg.inbound_dir {
        Folder::root(inbound).map_err(|e| format!("{}: {e}", inbound.display()))?;
    }
    Ok(())
}

/// Fault injection for the exactly-once test: with `FISCUS_FAULT_PAUSE_AT` naming this point, the process
/// announces it on standard error and stops here until it is killed. Unset (always, in service), nothing.
fn pause_at(point: &str) {
    if std::env::var("FISCUS_FAULT_PAUSE_AT").as_deref() == Ok(point) {
        eprintln!("FISCUS_FAULT_PAUSED {point}");
        loop {
            std::thread::park();
        }
    }
}
