//! Command-line interface.
//!
//! It is long because clap's derive reads the whole command line top-down: every subcommand's arguments and what
//! it prints, with the work itself in the crates it calls.

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use fiscus_domain::actor::Actor;
use fiscus_domain::clock::{parse_rfc3339, rfc3339};
use fiscus_domain::credentials::{AppStatus, Environment};
use fiscus_domain::scopes::ScopeSet;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::{Services, Settings};
use fiscus_server::admin::Admin;
use std::process::ExitCode;

use crate::settings::{DataArgs, ServeArgs, load};

#[derive(Parser, Debug)]
#[command(name = "fiscus", version, about = "Fiscus: a governed enterprise finance API")]
pub struct Cli {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the HTTP service (migrations run first).
    Serve {
        #[command(flatten)]
        serve: ServeArgs,
        /// On an empty database, create a sandbox demo workspace and print its key once.
        #[arg(long, env = "FISCUS_DEMO")]
        demo: bool,
    },
    /// Apply database migrations and exit.
    Migrate {
        /// Record this node's shared settings (server key, transparency log, claim times) as the cluster's,
        /// after changing them on purpose with every node stopped; a start with others is refused.
        #[arg(long)]
        accept_settings: bool,
    },
    /// Administer workspaces, applications and credentials.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
    /// Check the operation catalogue against the scope registry and the OpenAPI document.
    Catalogue {
        #[command(subcommand)]
        command: CatalogueCommand,
    },
    /// Verify sealed evidence.
    Verify {
        #[command(subcommand)]
        command: VerifyCommand,
    },
    /// The transparency log's public side.
    Evidence {
        #[command(subcommand)]
        command: EvidenceCommand,
    },
    /// Import CSV files into datasets (idempotent: the same file twice creates nothing).
    Import(Box<crate::import::ImportArgs>),
    /// The demo's data.
    Demo {
        #[command(subcommand)]
        command: DemoCommand,
    },
}

#[derive(Subcommand, Debug)]
pub enum DemoCommand {
    /// Import the demo data (real market and economic series, a sample ledger) into a workspace.
    Load {
        #[arg(long)]
        workspace: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum EvidenceCommand {
    /// Print the verifier key every checkpoint is signed with (C2SP signed-note: `<name>+<id>+<key>`), for
    /// auditors to keep.
    Key,
    /// Integrate a workspace's log and print a signed checkpoint of it (a new one if it grew), as
    /// `POST /api/v2/evidence/checkpoints` does.
    Checkpoint {
        #[arg(long)]
        workspace: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum CatalogueCommand {
    /// Print operations, paths, scopes and scope mismatches (exit 1 if any mismatch).
    Check,
}

#[derive(Subcommand, Debug)]
pub enum VerifyCommand {
    /// Recompute the audit chain of every workspace (or one): hashes, links and keyed MACs, and that it
    /// still reaches the event its log's latest signed checkpoint covers (from any node) and the head this
    /// node anchored in its file, if it keeps one; name the first broken event.
    Audit {
        #[arg(long)]
        workspace: Option<String>,
    },
    /// Check every sealed business record (actions, checks, decisions, evidence, settlements, delegations,
    /// identities, gateway requests) of every workspace (or one) against its keyed seal.
    Records {
        #[arg(long)]
        workspace: Option<String>,
    },
    /// Recompute every workspace's (or one's) supply chain of published models: each publication's head
    /// from its record, every link from the first to the newest, and every artifact in the model hub
    /// against its recorded hash; name each publication or artifact that fails.
    Models {
        #[arg(long)]
        workspace: Option<String>,
    },
    /// The transparency log of every workspace (or one): every sealed record and audit event has its leaf,
    /// the leaves give every kept checkpoint's root, and every checkpoint is signed by this deployment.
    /// With `--key` it needs no database and trusts nothing of Fiscus but that key: `--bundle FILE` checks an
    /// evidence bundle; `--checkpoint OLD --checkpoint NEW [--proof FILE]` checks that NEW extends the OLD you
    /// kept (a fork or a rollback is reported as such).
    Evidence {
        #[arg(long)]
        workspace: Option<String>,
        /// The verifier key (or a file holding it), obtained out of band.
        #[arg(long)]
        key: Option<String>,
        #[arg(long)]
        bundle: Option<std::path::PathBuf>,
        /// A checkpoint note kept (first) and a later one (second).
        #[arg(long)]
        checkpoint: Vec<std::path::PathBuf>,
        /// The answer of `GET /api/v2/evidence/consistency` between the two checkpoints' sizes.
        #[arg(long)]
        proof: Option<std::path::PathBuf>,
    },
    /// All of the above.
    All {
        #[arg(long)]
        workspace: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum AdminCommand {
    Workspace {
        #[command(subcommand)]
        command: WorkspaceCommand,
    },
    App {
        #[command(subcommand)]
        command: AppCommand,
    },
    Key {
        #[command(subcommand)]
        command: KeyCommand,
    },
    OauthClient {
        #[command(subcommand)]
        command: OAuthClientCommand,
    },
    /// Signed execution clients (Ed25519 keys for the agent-execution gateway). The CLI registers drafts
    /// only: granting, changing and revoking happen at the console, by an admin.
    ExecClient {
        #[command(subcommand)]
        command: ExecClientCommand,
    },
    Credits {
        #[command(subcommand)]
        command: CreditsCommand,
    },
    /// Operators: the people who approve (the human governance plane).
    Operator {
        #[command(subcommand)]
        command: OperatorCommand,
    },
    /// A workspace's collateral eligibility and haircut policy (versioned; the newest is in force).
    CollateralPolicy {
        #[command(subcommand)]
        command: CollateralPolicyCommand,
    },
    /// A workspace's restricted list: instruments no investment order may buy (a pre-trade check).
    RestrictedList {
        #[command(subcommand)]
        command: RestrictedListCommand,
    },
}

#[derive(Subcommand, Debug)]
pub enum RestrictedListCommand {
    /// Put a symbol on the list (or change its reason).
    Add {
        #[arg(long)]
        workspace: String,
        symbol: String,
        #[arg(long)]
        reason: String,
    },
    /// Print the list.
    List {
        #[arg(long)]
        workspace: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum CollateralPolicyCommand {
    /// Set the next version from a JSON file: `[{"asset_class": "equity", "haircut": 0.25}, …]`.
    Set {
        #[arg(long)]
        workspace: String,
        file: std::path::PathBuf,
    },
    /// Print the policy in force (the built-in default, version 0, when none was set).
    Show {
        #[arg(long)]
        workspace: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum OperatorCommand {
    /// Invite an operator; prints the one-time enrollment link on the last line.
    Add {
        #[arg(long)]
        workspace: String,
        #[arg(long)]
        email: String,
        #[arg(long, value_parser = ["admin", "approver", "auditor"])]
        role: String,
        /// Where operators reach the console [default: the settings' `public_url`, else http://<bind>].
        #[arg(long, env = "FISCUS_PUBLIC_URL")]
        base_url: Option<String>,
    },
    List {
        #[arg(long)]
        workspace: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum WorkspaceCommand {
    /// Create a workspace; prints its id on the last line.
    Create {
        name: String,
    },
    List,
    /// Set the scopes the workspace may grant (comma-separated, or `all`).
    Entitle {
        #[arg(long)]
        workspace: String,
        #[arg(long)]
        scopes: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum AppCommand {
    /// Create an application; prints its id on the last line.
    Create {
        #[arg(long)]
        workspace: String,
        #[arg(long)]
        name: String,
        #[arg(long, value_parser = ["sandbox", "production"])]
        environment: String,
        /// Comma-separated scopes.
        #[arg(long)]
        scopes: String,
        /// Rate-limit class (see the settings' service_classes).
        #[arg(long)]
        service_class: Option<String>,
    },
    List {
        #[arg(long)]
        workspace: String,
    },
    Suspend {
        #[arg(long)]
        app: String,
    },
    Resume {
        #[arg(long)]
        app: String,
    },
    Revoke {
        #[arg(long)]
        app: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum KeyCommand {
    /// Issue an API key; prints the key (shown once) on the last line.
    Issue {
        #[arg(long)]
        app: String,
        /// RFC 3339 expiry.
        #[arg(long)]
        expires_at: Option<String>,
    },
    /// Replace every active key of the application; prints the new key on the last line.
    Rotate {
        #[arg(long)]
        app: String,
    },
    /// Revoke one key (--key) or every active key of the application.
    Revoke {
        #[arg(long)]
        app: String,
        #[arg(long)]
        key: Option<String>,
    },
    List {
        #[arg(long)]
        app: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum ExecClientCommand {
    /// Register a draft client under an application; prints the client id (the RFC 9421 `keyid`) on the last
    /// line. It can sign nothing until an admin grants it at the console.
    Create {
        #[arg(long)]
        app: String,
        #[arg(long)]
        name: String,
        /// The client's Ed25519 public key: 32 bytes in base64.
        #[arg(long)]
        public_key: String,
    },
    /// The clients of a workspace with their standing.
    List {
        #[arg(long)]
        workspace: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum OAuthClientCommand {
    /// Create an OAuth client; prints the client id, then the secret (shown once) on the last line.
    Create {
        #[arg(long)]
        app: String,
    },
    /// Replace a client's secret and revoke its tokens; prints the new secret on the last line.
    Rotate {
        /// The application (with one client) or the client id.
        #[arg(long)]
        app: String,
    },
    List {
        #[arg(long)]
        app: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum CreditsCommand {
    /// Grant AI credits; prints the ledger entry id on the last line.
    Grant {
        #[arg(long)]
        workspace: String,
        #[arg(long, value_parser = ["sandbox", "production"])]
        environment: String,
        #[arg(long)]
        credits: i64,
        #[arg(long, default_value = "grant")]
        reason: String,
    },
}

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve { serve, demo } => {
            let settings = load(&cli.data, Some(&serve))?;
            init_logging(&settings);
            serve_command(settings, demo).await
        }
        Command::Migrate { accept_settings } => {
            let settings = load(&cli.data, None)?;
            let agreement = if accept_settings {
                fiscus_server::serve::Agreement::Accept
            } else {
                fiscus_server::serve::Agreement::Command
            };
            let state = fiscus_server::serve::open_with(settings, agreement).await?;
            println!("migrations applied ({})", state.store.backend().name());
            Ok(ExitCode::SUCCESS)
        }
        Command::Catalogue { command: CatalogueCommand::Check } => Ok(catalogue_check(&load(&cli.data, None)?)),
        Command::Verify { command: VerifyCommand::Evidence { key: Some(key), bundle, checkpoint, proof, .. } } => {
            Ok(verify_offline(&key, bundle.as_deref(), &checkpoint, proof.as_deref()))
        }
        Command::Evidence { command: EvidenceCommand::Key } => {
            let state = fiscus_server::serve::open(load(&cli.data, None)?).await?;
            println!("{}", fiscus_kernel::evidence::verifier_key(&state));
            Ok(ExitCode::SUCCESS)
        }
        Command::Evidence { command: EvidenceCommand::Checkpoint { workspace } } => {
            let state = fiscus_server::serve::open(load(&cli.data, None)?).await?;
            let checkpoint = fiscus_kernel::evidence::checkpoint_now(&state, &workspace)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?
                .ok_or_else(|| anyhow::anyhow!("the log of {workspace} has no record yet"))?;
            print!("{}", checkpoint.note);
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify { command } => {
            let state = fiscus_server::serve::open(load(&cli.data, None)?).await?;
            let (audit, records, models, evidence, workspace) = match command {
                VerifyCommand::Audit { workspace } => (true, false, false, false, workspace),
                VerifyCommand::Records { workspace } => (false, true, false, false, workspace),
                VerifyCommand::Models { workspace } => (false, false, true, false, workspace),
                VerifyCommand::Evidence { workspace, .. } => (false, false, false, true, workspace),
                VerifyCommand::All { workspace } => (true, true, true, true, workspace),
            };
            let mut ok = true;
            if audit {
                ok &= verify_audit(&state, workspace.as_deref()).await?;
            }
            if records {
                ok &= verify_records(&state, workspace.as_deref()).await?;
            }
            if models {
                ok &= verify_models(&state, workspace.as_deref()).await?;
            }
            if evidence {
                ok &= verify_evidence(&state, workspace.as_deref()).await?;
            }
            Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        Command::Import(args) => {
            let state = fiscus_server::serve::open(load(&cli.data, None)?).await?;
            let ok = crate::import::run(&state, *args).await?;
            Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        Command::Demo { command: DemoCommand::Load { workspace } } => {
            let state = fiscus_server::serve::open(load(&cli.data, None)?).await?;
            crate::import::demo_load(&state, &workspace).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Admin { command } => {
            let state = fiscus_server::serve::open(load(&cli.data, None)?).await?;
            let admin = Admin { store: &state.store, server_key: &state.server_key, actor: Actor::cli() };
            admin_command(&admin, &state.settings, command).await?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Logs to standard error at the levels `FISCUS_LOG` names (`info`, `info,sqlx=warn`: a default level and
/// levels per target; an unreadable value falls back to `info,sqlx=warn`). A plain target filter rather than
/// `EnvFilter`: it is all the service needs, and leaves the regex engine out of the release build.
fn init_logging(settings: &Settings) {
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::prelude::*;
    let filter = std::env::var("FISCUS_LOG")
        .ok()
        .and_then(|v| v.parse::<Targets>().ok())
        .unwrap_or_else(|| Targets::new().with_default(tracing::Level::INFO).with_target("sqlx", tracing::Level::WARN));
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    if settings.log_format == "pretty" {
        tracing_subscriber::registry().with(fmt).with(filter).init();
    } else {
        tracing_subscriber::registry().with(fmt.json().flatten_event(true).with_current_span(true)).with(filter).init();
    }
}

async fn serve_command(settings: Settings, demo: bool) -> anyhow::Result<ExitCode> {
    let bind = settings.bind.clone();
    // Bound first, so a node waiting for its database already answers why (`/readyz` 503).
    let socket = std::net::TcpListener::bind(&bind).with_context(|| format!("binding {bind}"))?;
    let Some(state) = fiscus_server::serve::open_when_ready(settings, &socket).await? else {
        return Ok(ExitCode::SUCCESS);
    };
    if demo {
        match fiscus_server::demo::seed_if_empty(&state.store, &state.server_key).await? {
            Some(d) => {
                println!(
                    "Demo workspace {} with application {} (sandbox, every scope).",
                    d.workspace_id, d.application_id
                );
                println!("FISCUS_DEMO_KEY={}", d.api_key);
                crate::import::demo_load(&state, &d.workspace_id).await?;
            }
            None => println!(
                "The database already holds a workspace, so no demo was created. The demo key was shown once when it was created; \
                 `fiscus admin key rotate --app <application id>` issues a new one."
            ),
        }
    }
    socket.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(socket)?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, backend = state.store.backend().name(), "fiscus listening");
    println!("Fiscus listening on http://{addr} (docs: http://{addr}/docs)");
    fiscus_server::serve::run(state, listener, fiscus_server::serve::shutdown_signal()).await?;
    Ok(ExitCode::SUCCESS)
}

/// The same report and ledger `GET /api/v2/catalogue` and `GET /api/v2/catalogue/ledger` serve.
fn catalogue_check(settings: &fiscus_kernel::settings::Settings) -> ExitCode {
    let report = fiscus_platform::catalogue_check::check(&fiscus_server::app::openapi_document());
    let ledger = fiscus_kernel::change_ledger::ledger(&settings.deprecations);
    println!(
        "catalogue version {} (every operation Stable and Published; deprecated: {}; ledger entries: {})",
        fiscus_kernel::change_ledger::CATALOGUE_VERSION,
        settings.deprecations.len(),
        ledger.len()
    );
    for d in &settings.deprecations {
        println!(
            "deprecated: {} since {}{}",
            d.operation_id,
            d.deprecated_at,
            d.sunset_at.as_deref().map(|s| format!(", sunset {s}")).unwrap_or_default()
        );
    }
    println!(
        "operations: {} ({} from the seed catalogue, {} added by Fiscus)",
        report.operations, report.seed_operations, report.added_operations
    );
    println!("paths: {}", report.paths);
    println!("scopes: {} registered, {} used by operations", report.scopes, report.scopes_used);
    println!("served now: {} operations; not yet served: {}", report.served.len(), report.not_yet_served.len());
    for m in &report.mismatches {
        println!("mismatch: {m}");
    }
    println!("scope mismatches: {}", report.mismatches.len());
    if report.mismatches.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

async fn workspaces(services: &Services, workspace: Option<&str>) -> anyhow::Result<Vec<String>> {
    Ok(match workspace {
        Some(w) => vec![w.to_string()],
        None => {
            let mut conn = services.store.read().await?;
            fiscus_store::workspaces::list_all(&mut conn).await?.into_iter().map(|w| w.id).collect()
        }
    })
}

async fn verify_audit(services: &Services, workspace: Option<&str>) -> anyhow::Result<bool> {
    let workspaces = workspaces(services, workspace).await?;
    let anchors = fiscus_kernel::verify::anchors(&services.settings, &services.store)?;
    let mut broken = 0;
    if workspace.is_none() {
        // A workspace anchored outside the database but gone from it lost its whole chain.
        for ws in anchors.keys().filter(|ws| !workspaces.contains(ws)) {
            broken += 1;
            println!("BROKEN  {ws}: anchored outside the database but missing from it");
        }
    }
    for ws in &workspaces {
        let report = fiscus_kernel::verify::verify_anchored(services, ws, anchors.get(ws))
            .await
            .with_context(|| format!("reading the audit chain of {ws}"))?;
        match &report.result {
            Ok(()) => println!("ok      {ws}: {} events, chain intact", report.events),
            Err(b) => {
                broken += 1;
                println!("BROKEN  {ws}: {}", fiscus_kernel::verify::describe(b));
            }
        }
    }
    println!("{} workspace(s) verified, {} broken", workspaces.len(), broken);
    Ok(broken == 0)
}

async fn verify_records(services: &Services, workspace: Option<&str>) -> anyhow::Result<bool> {
    let workspaces = workspaces(services, workspace).await?;
    let mut failures = 0;
    for ws in &workspaces {
        let (checked, unsealed) = fiscus_kernel::verify::verify_records(&services.store, ws)
            .await
            .with_context(|| format!("reading the sealed records of {ws}"))?;
        let (envelopes, altered) = fiscus_actions::verify::verify_envelopes(&services.store, ws)
            .await
            .with_context(|| format!("reading the actions of {ws}"))?;
        let (datasets, tampered) = fiscus_kernel::verify::verify_datasets(&services.store, ws)
            .await
            .with_context(|| format!("reading the datasets of {ws}"))?;
        if unsealed.is_empty() && altered.is_empty() && tampered.is_empty() {
            println!(
                "ok      {ws}: {checked} sealed records intact, {envelopes} envelope hashes recomputed, {datasets} dataset content hashes recomputed"
            );
        }
        for n in &tampered {
            println!("ALTERED {ws}: dataset {n}: its rows no longer hash to its sealed content hash");
        }
        failures += tampered.len();
        for u in &unsealed {
            println!("ALTERED {ws}: {}", fiscus_kernel::verify::describe_unsealed(u));
        }
        for id in &altered {
            println!("ALTERED {ws}: action {id}: its envelope hash is not the seal of its stored envelope");
        }
        failures += unsealed.len() + altered.len();
    }
    println!("{} workspace(s) verified, {} sealed record(s) failing", workspaces.len(), failures);
    Ok(failures == 0)
}

async fn verify_evidence(services: &Services, workspace: Option<&str>) -> anyhow::Result<bool> {
    let workspaces = workspaces(services, workspace).await?;
    let mut failures = 0;
    for ws in &workspaces {
        let report = fiscus_kernel::evidence::verify_log(services, ws)
            .await
            .with_context(|| format!("reading the transparency log of {ws}"))?;
        if report.failures.is_empty() {
            println!(
                "ok      {ws}: {} records and events in the log, {} leaves hashed again, {} checkpoints signed and reproduced",
                report.records, report.leaves, report.checkpoints
            );
        }
        for f in &report.failures {
            println!("ALTERED {ws}: {f}");
        }
        failures += report.failures.len();
    }
    println!("{} workspace(s) verified, {} log failure(s)", workspaces.len(), failures);
    Ok(failures == 0)
}

/// `fiscus verify evidence --key …`: an outsider's check of files, with no database and no settings.
fn verify_offline(
    key: &str,
    bundle: Option<&std::path::Path>,
    checkpoints: &[std::path::PathBuf],
    proof: Option<&std::path::Path>,
) -> ExitCode {
    use fiscus_domain::tlog::note::NoteVerifier;
    use fiscus_kernel::evidence::offline;
    let run = || -> Result<Vec<String>, String> {
        let text = std::fs::read_to_string(key).unwrap_or_else(|_| key.to_string());
        let key = NoteVerifier::parse(&text).map_err(|e| e.to_string())?;
        let read = |p: &std::path::Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
        let mut lines = Vec::new();
        if let Some(path) = bundle {
            let bundle: fiscus_kernel::evidence::views::EvidenceBundleView =
                serde_json::from_str(&read(path)?).map_err(|e| format!("{}: {e}", path.display()))?;
            let (c, n) = offline::verify_bundle(&key, &bundle)?;
            lines.push(format!(
                "ok      {n} records of {} proved against its signed checkpoint of size {}",
                c.origin, c.size
            ));
        }
        match checkpoints {
            [] => {}
            [one] => {
                let c = fiscus_domain::tlog::note::open_checkpoint(&key, &read(one)?).map_err(|e| e.to_string())?;
                lines.push(format!("ok      checkpoint of {} size {} signed", c.origin, c.size));
            }
            [kept, later] => {
                let hashes: Vec<String> = match proof {
                    Some(p) => {
                        let v: serde_json::Value =
                            serde_json::from_str(&read(p)?).map_err(|e| format!("{}: {e}", p.display()))?;
                        v["hashes"]
                            .as_array()
                            .map(|a| a.iter().filter_map(|h| h.as_str().map(str::to_string)).collect())
                            .unwrap_or_default()
                    }
                    None => Vec::new(),
                };
                let (old, new) = offline::verify_growth(&key, &read(kept)?, &read(later)?, &hashes)?;
                lines.push(format!(
                    "ok      {} of size {} extends the checkpoint of size {} kept",
                    new.origin, new.size, old.size
                ));
            }
            _ => return Err("give one checkpoint, or the one kept and a later one".into()),
        }
        if lines.is_empty() {
            return Err("nothing to verify: give --bundle or --checkpoint".into());
        }
        Ok(lines)
    };
    match run() {
        Ok(lines) => {
            for l in lines {
                println!("{l}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("FAILED  {e}");
            ExitCode::FAILURE
        }
    }
}

async fn verify_models(services: &Services, workspace: Option<&str>) -> anyhow::Result<bool> {
    let workspaces = workspaces(services, workspace).await?;
    let mut failures = 0;
    for ws in &workspaces {
        let report = fiscus_models::lqm::verify::verify_models(&services.store, ws)
            .await
            .with_context(|| format!("reading the published models of {ws}"))?;
        if report.problems.is_empty() {
            println!(
                "ok      {ws}: {} publication(s) on an unbroken supply chain, {} artifact(s) intact in the model hub",
                report.publications, report.artifacts
            );
        }
        for p in &report.problems {
            println!("BROKEN  {ws}: {p}");
        }
        failures += report.problems.len();
    }
    println!("{} workspace(s) verified, {} model supply-chain problem(s)", workspaces.len(), failures);
    Ok(failures == 0)
}

fn environment(s: &str) -> anyhow::Result<Environment> {
    Environment::parse(s).with_context(|| format!("unknown environment {s}"))
}

async fn admin_command(admin: &Admin<'_>, settings: &Settings, command: AdminCommand) -> anyhow::Result<()> {
    match command {
        AdminCommand::Workspace { command: WorkspaceCommand::Create { name } } => {
            let ws = admin.create_workspace(&name, false).await?;
            println!("created workspace {:?} (production access off)", ws.name);
            println!("{}", ws.id);
        }
        AdminCommand::Workspace { command: WorkspaceCommand::List } => {
            for ws in admin.list_workspaces().await? {
                println!(
                    "{}\t{}\tproduction_access={}\tcreated {}",
                    ws.id,
                    ws.name,
                    ws.production_access(),
                    rfc3339(ws.created_at)
                );
            }
        }
        AdminCommand::Workspace { command: WorkspaceCommand::Entitle { workspace, scopes } } => {
            let scopes = if scopes == "all" { ScopeSet::all() } else { ScopeSet::parse(&scopes)? };
            let ws = admin.set_workspace_entitlement(&workspace, &scopes).await?;
            println!("workspace {} is entitled to {} scopes", ws.id, scopes.len());
            println!("{}", ws.id);
        }
        AdminCommand::App { command } => match command {
            AppCommand::Create { workspace, name, environment: env, scopes, service_class } => {
                let scopes = ScopeSet::parse(&scopes)?;
                let app = admin
                    .create_application(&workspace, &name, environment(&env)?, &scopes, service_class.as_deref())
                    .await?;
                println!("created application {:?} in {} ({} scopes)", app.name, app.environment, scopes.len());
                println!("{}", app.id);
            }
            AppCommand::List { workspace } => {
                for app in admin.list_applications(&workspace).await? {
                    println!("{}\t{}\t{}\t{}\t{}", app.id, app.name, app.environment, app.status, app.scopes);
                }
            }
            AppCommand::Suspend { app } => {
                report_status(admin.set_application_status(&app, AppStatus::Suspended).await?)
            }
            AppCommand::Resume { app } => report_status(admin.set_application_status(&app, AppStatus::Active).await?),
            AppCommand::Revoke { app } => report_status(admin.set_application_status(&app, AppStatus::Revoked).await?),
        },
        AdminCommand::Key { command } => match command {
            KeyCommand::Issue { app, expires_at } => {
                let expires = match expires_at {
                    Some(s) => Some(parse_rfc3339(&s).with_context(|| format!("--expires-at {s} is not RFC 3339"))?),
                    None => None,
                };
                let key = admin.issue_key(&app, expires).await?;
                println!("issued key {} (shown once; store it now)", key.id);
                println!("{}", key.secret);
            }
            KeyCommand::Rotate { app } => {
                let key = admin.rotate_key(&app).await?;
                println!("rotated: previous keys refused from now on; new key {} (shown once)", key.id);
                println!("{}", key.secret);
            }
            KeyCommand::Revoke { app, key } => {
                let n = admin.revoke_keys(&app, key.as_deref()).await?;
                if n == 0 {
                    bail!("application {app} has no active key to revoke");
                }
                println!("revoked {n} key(s)");
                println!("{n}");
            }
            KeyCommand::List { app } => {
                for k in admin.list_keys(&app).await? {
                    println!("{}\t{}\t{}\tcreated {}", k.id, k.hint, k.status.as_str(), rfc3339(k.created_at));
                }
            }
        },
        AdminCommand::OauthClient { command } => match command {
            OAuthClientCommand::Create { app } => {
                let client = admin.create_oauth_client(&app).await?;
                println!("client_id={}", client.id);
                println!("client secret (shown once):");
                println!("{}", client.secret);
            }
            OAuthClientCommand::Rotate { app } => {
                let (client, revoked) = admin.rotate_oauth_client(&app).await?;
                println!("client_id={}; {revoked} live token(s) revoked; new secret (shown once):", client.id);
                println!("{}", client.secret);
            }
            OAuthClientCommand::List { app } => {
                for c in admin.list_oauth_clients(&app).await? {
                    println!("{}\t{}\t{}\tcreated {}", c.id, c.secret_hint, c.status.as_str(), rfc3339(c.created_at));
                }
            }
        },
        AdminCommand::ExecClient { command } => match command {
            ExecClientCommand::Create { app, name, public_key } => {
                let id = admin.register_execution_client(&app, &name, &public_key).await?;
                println!("registered draft client (grant it at the console, /console/clients):");
                println!("{id}");
            }
            ExecClientCommand::List { workspace } => {
                for c in admin.list_execution_clients(&workspace).await? {
                    println!(
                        "{}\t{}\t{}\t{}\t{}",
                        c.client.id,
                        c.client.environment.as_str(),
                        c.status().as_str(),
                        c.client.name,
                        fiscus_domain::execution_client::key_fingerprint(&c.client.public_key)
                    );
                }
            }
        },
        AdminCommand::Operator { command: OperatorCommand::Add { workspace, email, role, base_url } } => {
            let role = fiscus_domain::people::Role::parse(&role).context("unknown role")?;
            let (id, token) = admin.add_operator(&workspace, &email, role).await?;
            println!("invited operator {id} ({}); the link below works once, within 72 hours:", role.as_str());
            let base_url = base_url.unwrap_or_else(|| settings.public_base_url());
            println!("{}/console/enroll?token={token}", base_url.trim_end_matches('/'));
        }
        AdminCommand::Operator { command: OperatorCommand::List { workspace } } => {
            for o in admin.list_operators(&workspace).await? {
                println!(
                    "{}\t{}\t{}\t{}\tsecond factor: {}",
                    o.id,
                    o.email,
                    o.role.as_str(),
                    o.status.as_str(),
                    o.totp_confirmed == 1
                );
            }
        }
        AdminCommand::CollateralPolicy { command: CollateralPolicyCommand::Set { workspace, file } } => {
            let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
            let rules =
                serde_json::from_str(&text).with_context(|| format!("{} is not a list of rules", file.display()))?;
            let caller = fiscus_kernel::governed::Caller::bare(admin.actor.clone());
            match fiscus_investment::collateral::set_policy(admin.store, &caller, &workspace, rules).await {
                Ok(p) => {
                    println!("collateral policy version {} in force ({})", p.version, p.rules_hash);
                    println!("{}", p.id);
                }
                Err(fiscus_kernel::governed::Failure::Invalid(errors)) => {
                    let lines: Vec<String> = errors.into_iter().map(|(_, e)| e).collect();
                    bail!("the policy was refused:\n{}", lines.join("\n"));
                }
                Err(e) => bail!("the policy was not recorded: {e:?}"),
            }
        }
        AdminCommand::CollateralPolicy { command: CollateralPolicyCommand::Show { workspace } } => {
            let mut conn = admin.store.read().await?;
            match fiscus_investment::tables::collateral::current(&mut conn, admin.store.seal_key(), &workspace).await? {
                Some(p) => {
                    println!("version {} ({}, set by {})\n{}", p.version, p.rules_hash, p.created_by, p.rules_json)
                }
                None => println!(
                    "version 0 (the built-in default)\n{}",
                    serde_json::to_string(&fiscus_investment::rules::collateral::default_rules())?
                ),
            }
        }
        AdminCommand::RestrictedList { command: RestrictedListCommand::Add { workspace, symbol, reason } } => {
            let caller = fiscus_kernel::governed::Caller::bare(admin.actor.clone());
            match fiscus_investment::orders::restrict(admin.store, &caller, &workspace, &symbol, &reason).await {
                Ok(()) => println!("{symbol} is on the restricted list of {workspace}"),
                Err(fiscus_kernel::governed::Failure::Invalid(errors)) => {
                    let lines: Vec<String> = errors.into_iter().map(|(f, e)| format!("{f}: {e}")).collect();
                    bail!("refused:\n{}", lines.join("\n"));
                }
                Err(e) => bail!("the restricted list was not changed: {e:?}"),
            }
        }
        AdminCommand::RestrictedList { command: RestrictedListCommand::List { workspace } } => {
            let mut conn = admin.store.read().await?;
            for (symbol, reason) in fiscus_data_core::tables::book::restricted(&mut conn, &workspace).await? {
                println!("{symbol}\t{reason}");
            }
        }
        AdminCommand::Credits { command: CreditsCommand::Grant { workspace, environment: env, credits, reason } } => {
            let tenant = Tenant { workspace_id: workspace, environment: environment(&env)? };
            let id = admin.grant_credits(&tenant, credits, &reason).await?;
            println!("granted {credits} credits");
            println!("{id}");
        }
    }
    Ok(())
}

fn report_status(app: fiscus_store::applications::ApplicationRow) {
    println!("application {} is now {}", app.id, app.status);
    println!("{}", app.id);
}
