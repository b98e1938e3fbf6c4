//! A process's start: the database opened (the SQLite file created on first run), migrated, the secret key
//! loaded; the settings every process and node on the database must share agreed (`cluster_settings`); the
//! model hub's old files adopted; and for a serving node, waiting for PostgreSQL while answering why.

use anyhow::Context;
use std::time::Duration;
use tokio::net::TcpListener;

use fiscus_http::AppState;
use fiscus_kernel::settings::Settings;
use fiscus_store::Boxed;

/// Opens the database (creating the SQLite file on first run), applies migrations and loads the secret key.
pub fn open(settings: Settings) -> Boxed<'static, anyhow::Result<AppState>> {
    open_with(settings, Agreement::Command)
}

/// [`open`] for a node that serves: it also checks the settings only serving nodes must share.
pub fn open_node(settings: Settings) -> Boxed<'static, anyhow::Result<AppState>> {
    open_with(settings, Agreement::Node)
}

/// The database did not answer a start: worth waiting for (anything else a start refuses is not).
#[derive(Debug)]
pub struct Unreachable(pub String);

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unreachable {}

/// [`open`] for a node that serves: while the database does not answer, it tries again with backoff (0.5 s
/// doubling to 10 s) and answers on `listener` meanwhile, `/healthz` 200 and everything else 503 naming why
/// (so `/readyz` says what the node waits for); a shutdown signal while waiting ends the start. Any other
/// refusal (a migration, the shared settings) ends it at once.
pub async fn open_when_ready(settings: Settings, listener: &std::net::TcpListener) -> anyhow::Result<Option<AppState>> {
    // An embedded SQLite file that cannot be opened will not open later: that start fails at once.
    if !settings.effective_database_url().starts_with("postgres") {
        return open_node(settings).await.map(Some);
    }
    let mut wait = Duration::from_millis(500);
    let mut attempt = 1u32;
    let mut stop = Box::pin(shutdown_signal());
    // What `/readyz` says until the node is open: answered from the first attempt on.
    let why =
        std::sync::Arc::new(std::sync::Mutex::new(String::from("this node is starting: connecting to the database")));
    let waiting = listener.try_clone().context("sharing the listening socket")?;
    waiting.set_nonblocking(true)?;
    let waiting = TcpListener::from_std(waiting)?;
    let said = why.clone();
    let starting = axum::Router::new()
        .route("/healthz", axum::routing::get(|| async { r#"{"status":"starting"}"# }))
        .fallback(move || {
            let detail = said.lock().map(|d| d.clone()).unwrap_or_default();
            async move {
                fiscus_http::problem::ApiError::new(fiscus_domain::error_code::ErrorCode::Unavailable).detail(detail)
            }
        });
    let answering = tokio::spawn(async move {
        let _ = axum::serve(waiting, starting).await;
    });
    let opened = loop {
        let error = match open_node(settings.clone()).await {
            Ok(state) => break Ok(Some(state)),
            Err(e) => match e.downcast::<Unreachable>() {
                Ok(unreachable) => unreachable.0,
                Err(other) => break Err(other),
            },
        };
        tracing::warn!(attempt, error = %error, retry_in_ms = wait.as_millis() as u64, "the database does not answer");
        if let Ok(mut d) = why.lock() {
            *d = format!(
                "this node is starting: the database does not answer ({error}); attempt {attempt}, next in {:.1} s",
                wait.as_secs_f64()
            );
        }
        let stopped = tokio::select! {
            _ = tokio::time::sleep(wait) => false,
            _ = &mut stop => true,
        };
        if stopped {
            break Ok(None);
        }
        wait = (wait * 2).min(Duration::from_secs(10));
        attempt += 1;
    };
    answering.abort();
    opened
}

/// What a start does with the settings every node on the database must share ([`shared_settings`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// A command that writes (`fiscus admin`, `fiscus import`, …): the settings every writer shares are
    /// recorded where the cluster lacks them and checked; a difference refuses the start.
    Command,
    /// A serving node: every shared setting, the same way.
    Node,
    /// Records this node's as the cluster's (`fiscus migrate --accept-settings`, after a deliberate change
    /// with every node stopped).
    Accept,
}

/// The settings every process writing to one database must share, as this one has them: the server key (as
/// a MAC under it of a fixed label, which says nothing of the key) and whether records go into the
/// transparency log; and for a serving node (`node`) also the log's name (its signed checkpoints' origin)
/// and how long a claim lives before another node may take it over.
pub fn shared_settings(
    settings: &Settings,
    key: &fiscus_domain::integrity::SealKey,
    node: bool,
) -> Vec<(&'static str, String)> {
    use fiscus_domain::integrity::Stored;
    let mut shared = vec![
        ("server_key", key.row("cluster_settings", &[("name", Stored::Text("server_key".into()))])),
        ("evidence.log", settings.evidence.log.to_string()),
    ];
    if node {
        shared.extend([
            ("evidence.log_name", settings.log_name()),
            ("idempotency_stale_seconds", settings.idempotency_stale_seconds.to_string()),
            ("webhook_claim_stale_seconds", settings.webhook_claim_stale_seconds.to_string()),
        ]);
    }
    shared
}

/// This node, as the settings it records name it: its host and process.
fn node_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    format!("{}:{}", host.trim(), std::process::id())
}

/// [`open`], doing `agreement` with the cluster's shared settings.
pub fn open_with(settings: Settings, agreement: Agreement) -> Boxed<'static, anyhow::Result<AppState>> {
    Box::pin(async move {
        if settings.database_url.is_none() {
            std::fs::create_dir_all(&settings.data_dir)
                .with_context(|| format!("creating the data directory {}", settings.data_dir.display()))?;
        }
        let (server_key, key_source) = fiscus_kernel::secret_key::load_or_create(&settings.secret_key_path())?;
        let url = settings.effective_database_url();
        let seal_key = fiscus_domain::integrity::SealKey::derive(&server_key);
        let store = fiscus_store::Store::connect(&url, settings.database_max_connections, seal_key)
            .await
            .map_err(|e| Unreachable(format!("connecting to {}: {e}", fiscus_store::redact_url(&url))))?
            .with_group_commit(settings.group_commit);
        store.migrate().await.context("applying migrations")?;
        let ours = shared_settings(&settings, store.seal_key(), agreement != Agreement::Command);
        match agreement {
            Agreement::Accept => fiscus_store::cluster::accept(&store, &node_name(), &ours).await?,
            Agreement::Command | Agreement::Node => {
                let differ = fiscus_store::cluster::agree(&store, &node_name(), &ours).await?;
                if !differ.is_empty() {
                    let lines: Vec<String> = differ
                        .iter()
                        .map(|(name, r)| {
                            let (theirs, mine) = match *name {
                                "server_key" => ("another server key".to_string(), "this one".to_string()),
                                _ => (
                                    format!("`{}`", r.value),
                                    ours.iter()
                                        .find(|(n, _)| n == name)
                                        .map_or(String::new(), |(_, v)| format!("`{v}`")),
                                ),
                            };
                            format!(
                                "{name}: the cluster has {theirs} (recorded by {} at {}), this node {mine}",
                                r.recorded_by,
                                fiscus_domain::clock::rfc3339(r.recorded_at)
                            )
                        })
                        .collect();
                    anyhow::bail!(
                        "this node's settings differ from those every node on this database shares; give it the \
                         cluster's, or after changing them on purpose with every node stopped, run `fiscus migrate \
                         --accept-settings` once:\n  {}",
                        lines.join("\n  ")
                    );
                }
            }
        }
        // The model hub was once files in a node's data directory: what this node still has goes into the
        // database, where every node reads it.
        let adopted = fiscus_models::lqm::hub::adopt(&store, &settings.data_dir)
            .await
            .context("adopting the model hub's files")?;
        if adopted > 0 {
            tracing::info!(adopted, "model hub artifacts moved from the data directory into the database");
        }
        fiscus_store::tlog::set_logging(settings.evidence.log);
        let books = std::sync::Arc::new(fiscus_investment::orders::PortfolioBooks);
        let services = fiscus_kernel::Services::new(store, settings, server_key, key_source, books);
        Ok(AppState::new(
            services,
            vec![
                fiscus_agents::routes::calls::LARGE_BODY,
                fiscus_models::routes::quant::LARGE_BODY,
                fiscus_data::routes::intake::LARGE_BODY,
            ],
        ))
    })
}

/// Resolves on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutdown requested; finishing in-flight requests");
}
