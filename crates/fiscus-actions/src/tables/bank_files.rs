//! Payment instructions, `pain.001` files, the bank's messages and unmatched statement entries: sealed
//! records (`sealed_records`). An instruction's `file_id` is sealed with it and set once, guarded on
//! `IS NULL`: the step that puts a payment in exactly one file. A file's bytes sit beside its sealed body,
//! which carries their SHA-256, so edited bytes are refused too.

use crate::rules::bank_files::{EntryBody, FileBody, FileState, InstructionBody, MessageBody};
use fiscus_domain::credentials::Environment;
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use sqlx::AnyConnection;

use fiscus_store::dialect::{backend_of, for_update_skip_locked};
use fiscus_store::payment_tables::{BANK_MESSAGES, PAYMENT_FILES, PAYMENT_INSTRUCTIONS, STATEMENT_ENTRIES};
use fiscus_store::sealed_records::{
    Fields, Record, columns_differ, insert_record, opt_text, select_one, select_page, select_where, text,
    update_guarded,
};
use fiscus_store::seals;
use fiscus_store::{Result, StoreError, WriteTx};

/// A payment instruction and the file it is in, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    pub record: Record<InstructionBody>,
    pub file_id: Option<String>,
}

fn instruction(f: &Fields) -> Result<Instruction> {
    let record: Record<InstructionBody> = f.record()?;
    let b = &record.body;
    let same = f.text("action_id")? == b.action_id
        && f.text("debtor_account_id")? == b.debtor_account_id
        && f.text("currency")? == b.currency.code()
        && f.text("requested_date")? == b.requested_date;
    if !same {
        return Err(columns_differ(PAYMENT_INSTRUCTIONS.table, &record.id));
    }
    Ok(Instruction { file_id: f.opt_text("file_id")?, record })
}

/// Inserts an instruction; `Conflict` when its action has one already (a settlement pass repeated).
pub async fn insert_instruction(tx: &mut WriteTx, tenant: &Tenant, record: &Record<InstructionBody>) -> Result<()> {
    let b = &record.body;
    let own = [
        ("action_id", text(&b.action_id)),
        ("debtor_account_id", text(&b.debtor_account_id)),
        ("currency", text(b.currency.code())),
        ("requested_date", text(&b.requested_date)),
    ];
    insert_record(tx, &PAYMENT_INSTRUCTIONS, tenant, record, &own).await
}

/// The instruction of an action, if it has one.
pub async fn instruction_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    action_id: &str,
) -> Result<Option<Instruction>> {
    select_where(conn, key, &PAYMENT_INSTRUCTIONS, tenant, "action_id", text(action_id))
        .await?
        .first()
        .map(instruction)
        .transpose()
}

/// The instructions of the tenant's actions among `action_ids` (those that have one).
pub async fn instructions_for(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    action_ids: &[&str],
) -> Result<Vec<Instruction>> {
    let mut found = Vec::with_capacity(action_ids.len());
    for chunk in action_ids.chunks(500) {
        let placeholders: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 3)).collect();
        let filter = format!("workspace_id = $1 AND environment = $2 AND action_id IN ({})", placeholders.join(", "));
        let mut binds =
            vec![Stored::Text(tenant.workspace_id.clone()), Stored::Text(tenant.environment.as_str().into())];
        binds.extend(chunk.iter().map(|id| Stored::Text((*id).to_string())));
        for columns in seals::select_sealed(conn, key, &PAYMENT_INSTRUCTIONS, &filter, &binds).await? {
            found.push(instruction(&Fields { table: PAYMENT_INSTRUCTIONS.table, columns })?);
        }
    }
    Ok(found)
}

/// The tenant's filed instructions in `currency` whose payments are still executing (what a statement
/// entry without an end-to-end id may be).
pub async fn filed_in(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    currency: fiscus_domain::money::Currency,
) -> Result<Vec<Instruction>> {
    let rows = seals::select_sealed(
        conn,
        key,
        &PAYMENT_INSTRUCTIONS,
        "workspace_id = $1 AND environment = $2 AND currency = $3 AND file_id IS NOT NULL \
         AND action_id IN (SELECT id FROM actions WHERE workspace_id = $1 AND control_state = 'executing') ORDER BY id",
        &[
            Stored::Text(tenant.workspace_id.clone()),
            Stored::Text(tenant.environment.as_str().into()),
            Stored::Text(currency.code().into()),
        ],
    )
    .await?;
    rows.into_iter().map(|columns| instruction(&Fields { table: PAYMENT_INSTRUCTIONS.table, columns })).collect()
}

/// What a claim of unfiled payments found: the group's instructions whose seals check, and the rows of
/// the group that did not (for the worker to set aside: `fiscus_store::set_aside`).
pub struct Unfiled {
    pub tenant: Tenant,
    pub debtor_account_id: String,
    pub instructions: Vec<Instruction>,
    pub bad: Vec<fiscus_store::set_aside::Bad>,
}

/// Claims the oldest due group of unfiled payments (one tenant, debit account, currency and requested date),
/// up to `limit`, locked for the caller's transaction; rows set aside are never claimed, and a row of the
/// group that fails its seal or cannot be read is handed back in `bad` rather than failing the claim (one
/// edited row must not stop every workspace's payments: issue 54).
pub async fn claim_unfiled(tx: &mut WriteTx, today: &str, limit: i64) -> Result<Option<Unfiled>> {
    let skip = for_update_skip_locked(backend_of(tx.conn()));
    let not_set_aside = fiscus_store::set_aside::skipped(PAYMENT_INSTRUCTIONS.table, "payment_instructions");
    let first: Option<(String, String, String, String, String)> = sqlx::query_as(&format!(
        "SELECT workspace_id, environment, debtor_account_id, currency, requested_date FROM payment_instructions \
         WHERE file_id IS NULL AND requested_date <= $1 AND {not_set_aside} ORDER BY requested_date, id LIMIT 1{skip}"
    ))
    .bind(today)
    .fetch_optional(tx.conn())
    .await?;
    let Some((workspace_id, environment, debtor, currency, date)) = first else { return Ok(None) };
    let environment = Environment::parse(&environment)
        .ok_or_else(|| StoreError::Corrupt(format!("payment_instructions: environment {environment:?}")))?;
    let tenant = Tenant { workspace_id, environment };
    let key = tx.seal_key().clone();
    let binds = [
        Stored::Text(tenant.workspace_id.clone()),
        Stored::Text(tenant.environment.as_str().into()),
        Stored::Text(debtor.clone()),
        Stored::Text(currency),
        Stored::Text(date),
        Stored::Integer(limit),
    ];
    let filter = format!(
        "workspace_id = $1 AND environment = $2 AND debtor_account_id = $3 AND currency = $4 \
         AND requested_date = $5 AND file_id IS NULL AND {not_set_aside} ORDER BY id LIMIT $6{skip}"
    );
    let (rows, tampered) = seals::select_sealed_split(tx.conn(), &key, &PAYMENT_INSTRUCTIONS, &filter, &binds).await?;
    let mut bad: Vec<fiscus_store::set_aside::Bad> = tampered
        .into_iter()
        .map(|(record_id, named)| fiscus_store::set_aside::Bad {
            record_id,
            tenant: named.unwrap_or_else(|| tenant.clone()),
            reason: "it failed its seal (edited outside Fiscus)".into(),
        })
        .collect();
    let mut instructions = Vec::with_capacity(rows.len());
    for columns in rows {
        let id = seals::id_of(&columns);
        match instruction(&Fields { table: PAYMENT_INSTRUCTIONS.table, columns }) {
            Ok(i) => instructions.push(i),
            Err(e) => bad.push(fiscus_store::set_aside::Bad::of(&e, &id, &tenant).ok_or(e)?),
        }
    }
    Ok(Some(Unfiled { tenant, debtor_account_id: debtor, instructions, bad }))
}

/// Puts each instruction in `file_id`, once: every one must still be unfiled, or nothing is (`Conflict`,
/// and the caller's transaction rolls back). Each row is re-sealed with its file.
pub async fn assign(tx: &mut WriteTx, tenant: &Tenant, instructions: &[Instruction], file_id: &str) -> Result<()> {
    let key = tx.seal_key().clone();
    for i in instructions {
        let r = &i.record;
        let columns = vec![
            text(&r.id),
            text(&tenant.workspace_id),
            text(tenant.environment.as_str()),
            text(&r.body.action_id),
            text(&r.body.debtor_account_id),
            text(r.body.currency.code()),
            text(&r.body.requested_date),
            text(&r.body_json),
            text(&r.content_hash),
            text(&r.created_by.label()),
            Stored::Integer(r.created_at),
            text(file_id),
        ];
        let mac = seals::seal_of(&key, &PAYMENT_INSTRUCTIONS, columns.clone())?;
        let done = sqlx::query(
            "UPDATE payment_instructions SET file_id = $1, seal_mac = $2 \
             WHERE id = $3 AND workspace_id = $4 AND environment = $5 AND file_id IS NULL",
        )
        .bind(file_id)
        .bind(mac)
        .bind(&r.id)
        .bind(&tenant.workspace_id)
        .bind(tenant.environment.as_str())
        .execute(tx.conn())
        .await?;
        if done.rows_affected() != 1 {
            return Err(StoreError::Conflict(format!("payment instruction {} is in a file already", r.id)));
        }
        // The re-sealed row is a new version of the record: a new leaf.
        seals::log(tx, &PAYMENT_INSTRUCTIONS, &columns).await?;
    }
    Ok(())
}

/// A file as recorded, its bytes checked against the sealed hash.
#[derive(Clone, Debug, PartialEq)]
pub struct File {
    pub record: Record<FileBody>,
    pub state: FileState,
    pub published_at: Option<i64>,
}

fn file(f: &Fields) -> Result<File> {
    let record: Record<FileBody> = f.record()?;
    let b = &record.body;
    let same = f.text("debtor_account_id")? == b.debtor_account_id
        && f.text("currency")? == b.currency.code()
        && f.text("requested_date")? == b.requested_date;
    if !same {
        return Err(columns_differ(PAYMENT_FILES.table, &record.id));
    }
    Ok(File { state: f.parsed("state", FileState::parse)?, published_at: f.opt_int("published_at")?, record })
}

pub async fn insert_file(tx: &mut WriteTx, tenant: &Tenant, record: &Record<FileBody>, content: &str) -> Result<()> {
    let b = &record.body;
    let own = [
        ("debtor_account_id", text(&b.debtor_account_id)),
        ("currency", text(b.currency.code())),
        ("requested_date", text(&b.requested_date)),
        ("state", text(FileState::Recorded.as_str())),
    ];
    insert_record(tx, &PAYMENT_FILES, tenant, record, &own).await?;
    sqlx::query("UPDATE payment_files SET content = $1 WHERE id = $2")
        .bind(content)
        .bind(&record.id)
        .execute(tx.conn())
        .await?;
    Ok(())
}

pub async fn get_file(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<File> {
    file(&select_one(conn, key, &PAYMENT_FILES, tenant, id).await?)
}

/// The tenant's files, newest first, before `before`, `limit + 1` of them.
pub async fn list_files(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    before: Option<&str>,
    limit: u32,
) -> Result<Vec<File>> {
    select_page(conn, key, &PAYMENT_FILES, tenant, before, limit).await?.iter().map(file).collect()
}

/// A file's bytes, refused as `Tampered` unless they hash to what its sealed body says.
pub async fn content(conn: &mut AnyConnection, tenant: &Tenant, file: &File) -> Result<String> {
    let (content,): (String,) =
        sqlx::query_as("SELECT content FROM payment_files WHERE id = $1 AND workspace_id = $2 AND environment = $3")
            .bind(&file.record.id)
            .bind(&tenant.workspace_id)
            .bind(tenant.environment.as_str())
            .fetch_optional(&mut *conn)
            .await?
            .ok_or(StoreError::NotFound)?;
    if fiscus_domain::evidence::seal_bytes(content.as_bytes()) != file.record.body.sha256 {
        return Err(StoreError::Tampered(format!("payment_files {} content", file.record.id)));
    }
    Ok(content)
}

/// Files not yet published, oldest first, of every tenant (the worker finishes them).
pub async fn unpublished(
    conn: &mut AnyConnection,
    key: &SealKey,
    limit: i64,
) -> Result<(Vec<(Tenant, File)>, Vec<fiscus_store::set_aside::Bad>)> {
    let filter = format!(
        "state <> 'published' AND {} ORDER BY id LIMIT $1",
        fiscus_store::set_aside::skipped(PAYMENT_FILES.table, "payment_files")
    );
    let (rows, tampered) =
        seals::select_sealed_split(conn, key, &PAYMENT_FILES, &filter, &[Stored::Integer(limit)]).await?;
    let mut bad = Vec::new();
    for (record_id, named) in tampered {
        // A row that names no tenant Fiscus knows cannot be filed under one; it stays a failure to see.
        let tenant = named.ok_or_else(|| StoreError::Tampered(format!("payment_files {record_id}")))?;
        bad.push(fiscus_store::set_aside::Bad {
            record_id,
            tenant,
            reason: "it failed its seal (edited outside Fiscus)".into(),
        });
    }
    let mut found = Vec::with_capacity(rows.len());
    for columns in rows {
        let f = Fields { table: PAYMENT_FILES.table, columns };
        let environment = f.parsed("environment", Environment::parse)?;
        let tenant = Tenant { workspace_id: f.text("workspace_id")?, environment };
        match file(&f) {
            Ok(file) => found.push((tenant, file)),
            Err(e) => bad.push(fiscus_store::set_aside::Bad::of(&e, &seals::id_of(&f.columns), &tenant).ok_or(e)?),
        }
    }
    Ok((found, bad))
}

/// Moves a file's publication from `from` to `to` (stamping `published_at` on publication); `false` when it
/// was no longer at `from` (another worker moved it).
pub async fn advance(
    tx: &mut WriteTx,
    tenant: &Tenant,
    id: &str,
    from: FileState,
    to: FileState,
    now: i64,
) -> Result<bool> {
    let mut set = vec![("state", text(to.as_str()))];
    if to == FileState::Published {
        set.push(("published_at", Stored::Integer(now)));
    }
    update_guarded(tx, &PAYMENT_FILES, tenant, id, &set, ("state", from.as_str())).await
}

/// A bank message as recorded.
pub type Message = Record<MessageBody>;

fn message(f: &Fields) -> Result<Message> {
    let record: Message = f.record()?;
    if f.text("sha256")? != record.body.sha256 || f.text("kind")? != record.body.kind.as_str() {
        return Err(columns_differ(BANK_MESSAGES.table, &record.id));
    }
    Ok(record)
}

/// Inserts a message with its bytes; `Conflict` when the tenant has the same bytes already.
pub async fn insert_message(tx: &mut WriteTx, tenant: &Tenant, record: &Message, content: &str) -> Result<()> {
    let own = [("sha256", text(&record.body.sha256)), ("kind", text(record.body.kind.as_str()))];
    insert_record(tx, &BANK_MESSAGES, tenant, record, &own).await?;
    sqlx::query("UPDATE bank_messages SET content = $1 WHERE id = $2")
        .bind(content)
        .bind(&record.id)
        .execute(tx.conn())
        .await?;
    Ok(())
}

pub async fn message_by_hash(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    sha256: &str,
) -> Result<Option<Message>> {
    select_where(conn, key, &BANK_MESSAGES, tenant, "sha256", text(sha256)).await?.first().map(message).transpose()
}

/// The tenant's messages, newest first, before `before`, `limit + 1` of them.
pub async fn list_messages(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    before: Option<&str>,
    limit: u32,
) -> Result<Vec<Message>> {
    select_page(conn, key, &BANK_MESSAGES, tenant, before, limit).await?.iter().map(message).collect()
}

pub async fn get_message(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Message> {
    message(&select_one(conn, key, &BANK_MESSAGES, tenant, id).await?)
}

/// An unmatched statement entry and its resolution, if a person gave one.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub record: Record<EntryBody>,
    pub message_id: String,
    pub resolved: Option<(fiscus_domain::actor::Actor, i64, String)>,
}

fn entry(f: &Fields) -> Result<Entry> {
    let record: Record<EntryBody> = f.record()?;
    let resolution = f.opt_text("resolution")?;
    let resolved = match (f.stamp("resolved_by", "resolved_at")?, resolution) {
        (Some((by, at)), Some(r)) => Some((by, at, r)),
        (None, None) => None,
        _ => return Err(columns_differ(STATEMENT_ENTRIES.table, &record.id)),
    };
    let state = f.text("state")?;
    if (state == "resolved") != resolved.is_some() {
        return Err(columns_differ(STATEMENT_ENTRIES.table, &record.id));
    }
    Ok(Entry { message_id: f.text("message_id")?, resolved, record })
}

pub async fn insert_entry(
    tx: &mut WriteTx,
    tenant: &Tenant,
    record: &Record<EntryBody>,
    message_id: &str,
) -> Result<()> {
    let own = [("message_id", text(message_id)), ("state", text("unmatched"))];
    insert_record(tx, &STATEMENT_ENTRIES, tenant, record, &own).await
}

/// The tenant's unmatched entries not yet resolved, oldest first.
pub async fn unmatched(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant) -> Result<Vec<Entry>> {
    select_where(conn, key, &STATEMENT_ENTRIES, tenant, "state", text("unmatched")).await?.iter().map(entry).collect()
}

pub async fn get_entry(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Entry> {
    entry(&select_one(conn, key, &STATEMENT_ENTRIES, tenant, id).await?)
}

/// Records a person's resolution of an unmatched entry; `false` when it was resolved meanwhile.
pub async fn resolve(
    tx: &mut WriteTx,
    tenant: &Tenant,
    id: &str,
    by: &fiscus_domain::actor::Actor,
    at: i64,
    resolution: &str,
) -> Result<bool> {
    let set = [
        ("state", text("resolved")),
        ("resolved_by", text(&by.label())),
        ("resolved_at", Stored::Integer(at)),
        ("resolution", opt_text(Some(resolution))),
    ];
    update_guarded(tx, &STATEMENT_ENTRIES, tenant, id, &set, ("state", "unmatched")).await
}
