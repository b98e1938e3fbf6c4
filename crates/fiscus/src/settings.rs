//! Settings layering: built-in defaults < TOML file < `FISCUS_*` environment variables < flags. Clap reads
//! the environment variables and flags (a flag wins over its variable); this module lays them over the file.

use anyhow::Context;
use clap::Args;
use fiscus_kernel::Settings;
use std::path::PathBuf;

/// Where the data lives; shared by every command that opens the database.
#[derive(Args, Debug, Clone, Default)]
pub struct DataArgs {
    /// TOML settings file.
    #[arg(long, env = "FISCUS_CONFIG", global = true)]
    pub config: Option<PathBuf>,
    /// Directory for the embedded SQLite database and the secret key [default: ./fiscus-data].
    #[arg(long, env = "FISCUS_DATA_DIR", global = true)]
    pub data_dir: Option<PathBuf>,
    /// PostgreSQL URL (postgres://…); without it the embedded SQLite file is used.
    #[arg(long, env = "FISCUS_DATABASE_URL", global = true)]
    pub database_url: Option<String>,
    /// File with the server's secret key [default: <data-dir>/secret.key].
    #[arg(long, env = "FISCUS_SECRET_KEY_FILE", global = true)]
    pub secret_key_file: Option<PathBuf>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct ServeArgs {
    /// Address to listen on [default: 127.0.0.1:8080].
    #[arg(long, env = "FISCUS_BIND")]
    pub bind: Option<String>,
    /// Log format: json or pretty [default: json].
    #[arg(long, env = "FISCUS_LOG_FORMAT")]
    pub log_format: Option<String>,
    /// Lifetime of OAuth access tokens in seconds [default: 3600].
    #[arg(long, env = "FISCUS_ACCESS_TOKEN_TTL_SECONDS")]
    pub access_token_ttl_seconds: Option<u64>,
    /// The URL people use to reach this service (enrolment links) [default: http://<bind>].
    #[arg(long, env = "FISCUS_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Largest accepted request body in bytes [default: 1048576].
    #[arg(long, env = "FISCUS_BODY_LIMIT_BYTES")]
    pub body_limit_bytes: Option<usize>,
}

pub fn load(data: &DataArgs, serve: Option<&ServeArgs>) -> anyhow::Result<Settings> {
    let mut settings = match &data.config {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            Settings::from_toml(&text).with_context(|| format!("parsing {}", path.display()))?
        }
        None => Settings::default(),
    };
    if let Some(v) = &data.data_dir {
        settings.data_dir = v.clone();
    }
    if let Some(v) = &data.database_url {
        settings.database_url = Some(v.clone());
    }
    if let Some(v) = &data.secret_key_file {
        settings.secret_key_file = Some(v.clone());
    }
    if let Some(s) = serve {
        if let Some(v) = &s.bind {
            settings.bind = v.clone();
        }
        if let Some(v) = &s.log_format {
            settings.log_format = v.clone();
        }
        if let Some(v) = s.access_token_ttl_seconds {
            settings.access_token_ttl_seconds = v;
        }
        if let Some(v) = &s.public_url {
            settings.public_url = Some(v.clone());
        }
        if let Some(v) = s.body_limit_bytes {
            settings.body_limit_bytes = v;
        }
    }
    anyhow::ensure!(settings.access_token_ttl_seconds > 0, "access_token_ttl_seconds must be positive");
    anyhow::ensure!(settings.body_limit_bytes > 0, "body_limit_bytes must be positive");
    anyhow::ensure!(
        settings.public_url.as_deref().is_none_or(|u| u.starts_with("http://") || u.starts_with("https://")),
        "public_url must start with http:// or https://"
    );
    anyhow::ensure!(settings.max_connections > 0, "max_connections must be positive");
    anyhow::ensure!(settings.header_read_timeout_seconds > 0, "header_read_timeout_seconds must be positive");
    anyhow::ensure!(
        settings.service_classes.values().all(|c| c.quota > 0 && c.window_seconds > 0),
        "every service class needs a positive quota and window"
    );
    anyhow::ensure!(matches!(settings.log_format.as_str(), "json" | "pretty"), "log_format must be json or pretty");
    let mut deprecated = std::collections::BTreeSet::new();
    for d in &settings.deprecations {
        fiscus_kernel::change_ledger::check(d).map_err(|why| anyhow::anyhow!("deprecations: {why}"))?;
        anyhow::ensure!(deprecated.insert(&d.operation_id), "deprecations: `{}` is listed twice", d.operation_id);
    }
    Ok(settings)
}
