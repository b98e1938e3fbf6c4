//! Service settings. The binary layers them: built-in defaults, then a TOML file, then `FISCUS_*`
//! environment variables, then command-line flags (each later layer wins).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One rate-limit class: at most `quota` requests per `window_seconds` per application (or, at the token
/// endpoint, per client id and per address).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceClass {
    pub quota: u64,
    pub window_seconds: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Address to listen on.
    pub bind: String,
    /// Directory for the embedded SQLite database and the generated secret key.
    pub data_dir: PathBuf,
    /// `postgres://…` to use PostgreSQL instead of the embedded SQLite file.
    pub database_url: Option<String>,
    /// Maximum pooled database connections.
    pub database_max_connections: u32,
    /// Commit concurrent write transactions together (one durable commit per group, each request's changes
    /// in its own savepoint; see `fiscus_store`'s `group` module). On by default; off commits each alone.
    pub group_commit: bool,
    /// File holding the server's secret key (keyed hashes of credentials, encryption of stored secrets).
    /// Defaults to `<data_dir>/secret.key`, created on first run.
    pub secret_key_file: Option<PathBuf>,
    /// Lifetime of OAuth access tokens.
    pub access_token_ttl_seconds: u64,
    /// Largest accepted request body.
    pub body_limit_bytes: usize,
    /// The bytes every request body in flight may hold together (64 MiB unless set): a body is admitted
    /// before it is read, by its declared length (or its route's limit when it declares none), and holds
    /// its bytes until its answer is made (`fiscus_http::admission`). Parsing holds a few times a body's
    /// bytes, so this bounds the memory bodies take (crates/fiscus-http/README.md).
    pub body_bytes_in_flight: usize,
    /// One workspace's share of `body_bytes_in_flight` (32 MiB unless set; never less than the largest
    /// route's body limit, so every body that fits its route can be admitted).
    pub body_bytes_in_flight_per_workspace: usize,
    /// How long a body waits for room before it is refused with 503 and `Retry-After`.
    pub body_admission_wait_ms: u64,
    /// How long an `Idempotency-Key` and its stored response are kept.
    pub idempotency_retention_seconds: u64,
    /// After this long without completing, an in-flight idempotent request is presumed dead and a retry may
    /// take its key over.
    pub idempotency_stale_seconds: u64,
    /// Rate-limit classes by name. Applications name one; unknown names fall back to `standard`.
    pub service_classes: BTreeMap<String, ServiceClass>,
    /// The region this node reports (`GET /infrastructure/regions`).
    pub region: String,
    /// Log format: `json` (default) or `pretty`.
    pub log_format: String,
    /// Seconds allowed for in-flight requests to finish after SIGTERM/SIGINT.
    pub shutdown_grace_seconds: u64,
    /// Seconds a stopping node keeps serving with `/readyz` at 503 before it stops accepting, so a load
    /// balancer's health check takes it out of rotation first (its check interval times the failures it
    /// needs; 0, the default, without a balancer).
    pub shutdown_drain_seconds: u64,
    /// A console session ends after this long without a request.
    pub console_idle_seconds: u64,
    /// A console session ends this long after sign-in, whatever happens.
    pub console_absolute_seconds: u64,
    /// Failed sign-ins tolerated before the account locks (with doubling lock periods).
    pub console_max_failures: u32,
    /// How often this node's settlement worker looks for work, in milliseconds.
    pub worker_interval_ms: u64,
    /// Distinct approvers a T1 action needs (at least 1; configuration can only raise it).
    pub approval_quorum_t1: u32,
    /// Distinct approvers a T2 action needs (at least 2; configuration can only raise it).
    pub approval_quorum_t2: u32,
    /// The URL people use to reach this service (enrolment links, the console). Defaults to `http://<bind>`.
    pub public_url: Option<String>,
    /// Most connections served at once; further clients wait in the listen backlog. Never more than the
    /// process's file-descriptor limit allows (less a reserve for the database and files).
    pub max_connections: usize,
    /// A connection that has not sent a complete request head within this many seconds, whether new or idle
    /// between keep-alive requests, is closed.
    pub header_read_timeout_seconds: u64,
    /// A request body has this many seconds before it must keep pace, and may never pause longer
    /// (`connections::pace`); past it the request is answered 408 and the connection closed.
    pub body_read_timeout_seconds: u64,
    /// The rate a request body must average after its first `body_read_timeout_seconds`.
    pub body_min_bytes_per_second: u64,
    /// Connections one network address may hold open before any of their requests authenticated (a
    /// credential or a console session); a further one is answered 429 and closed. Never more than half of
    /// `max_connections`. 0: no limit (behind a proxy that makes every client one address, set it to 0 and
    /// limit at the proxy).
    pub unauthenticated_connections_per_address: usize,
    /// How old a request signature's `created` may be (RFC 9421 signed execution clients); its nonce is
    /// remembered as long.
    pub signature_window_seconds: u64,
    /// Development only: sandbox webhook endpoints may be `http://` on loopback addresses. Off by default;
    /// never applies to production endpoints.
    pub webhooks_allow_loopback: bool,
    /// Fixed answers for webhook host names, consulted before DNS (an air-gapped deployment's pins, and the
    /// tests' way to answer a name with a private or metadata address). Every answer is screened all the same.
    pub webhook_hosts: BTreeMap<String, Vec<std::net::IpAddr>>,
    /// Whether this node runs a webhook delivery worker (on by default; any number of nodes may).
    pub webhook_worker: bool,
    /// Whether this node runs a compute worker for queued jobs (on by default; any number of nodes may).
    pub compute_worker: bool,
    /// Whether this node runs a workflow worker for due runs (on by default; any number of nodes may).
    pub workflow_worker: bool,
    /// Whether this node runs an agent worker for queued Agent Space runs (on by default; any number of
    /// nodes may).
    pub agent_worker: bool,
    /// The queue driver of asynchronous Agent Space runs: `database` (runs are queued in the database and
    /// claimed by any node's agent worker) or `none` (no queue: `async` runs answer 503, `auto` runs run in the request).
    pub agent_queue: AgentQueue,
    /// Agent Space runs one workspace and environment may have queued or running at once; beyond it a run
    /// answers 429 with `Retry-After`.
    pub agent_capacity: u32,
    /// The speech runtime to load for transcription (default: Debian's `libpocketsphinx.so.3`, found by the
    /// dynamic loader). Missing, transcription answers 503 and everything else works.
    pub speech_library: Option<PathBuf>,
    /// The speech model's directory, laid out as Debian's `pocketsphinx-en-us`.
    pub speech_model_dir: PathBuf,
    /// Threads computations may use at once, for queued jobs and for those answered in their request alike.
    /// 0: queued jobs get one fewer than the machine's cores but at least two (so one workspace's long job
    /// never holds the only thread another workspace's job could start on), and computations answered in
    /// their request one fewer than the cores, at least one.
    pub compute_threads: usize,
    /// Queued compute jobs one workspace may have running at once, on all nodes (0: half the job threads,
    /// at least one); the claim also takes the least-served workspace first.
    pub compute_jobs_per_workspace: usize,
    /// How long a computation answered in its request may take before it is stopped and queued instead
    /// (202), in milliseconds; a workspace computes at most one in-request computation at a time.
    pub inline_compute_budget_ms: u64,
    /// Workflow runs and Agent Space runs one workspace may have claimed by workers at once, on all nodes.
    pub runs_per_workspace: usize,
    /// Webhook endpoint queues one workspace may have claimed by delivery workers at once, on all nodes
    /// (each node serves at most 32 queues at once).
    pub webhook_queues_per_workspace: usize,
    /// How long one webhook delivery attempt may take, connection included (at most 15).
    pub webhook_timeout_seconds: u64,
    /// A worker's claim on an endpoint's delivery queue older than this is taken over by another worker
    /// (its node died or hangs); the events it had not recorded are sent again, with the same webhook-id.
    pub webhook_claim_stale_seconds: u64,
    /// How long finished webhook deliveries and their attempt log are kept (pending ones are kept until
    /// they finish).
    pub webhook_log_retention_days: u64,
    /// Where this node anchors the audit chains' heads outside the database. Defaults to
    /// `<data_dir>/audit-anchor.json`; `fiscus verify audit` reads the same file.
    pub audit_anchor_file: Option<PathBuf>,
    /// How often the anchors are moved forward.
    pub audit_anchor_interval_seconds: u64,
    /// Token requests (`POST /oauth/token`, failed ones included) allowed per client id.
    pub token_requests_per_client: ServiceClass,
    /// Token requests allowed per client network address, whatever client id they name.
    pub token_requests_per_address: ServiceClass,
    /// Console sign-in attempts (`POST /console/login`, failed ones included) per network address.
    pub sign_in_attempts_per_address: ServiceClass,
    /// Console sign-in attempts per e-mail address, whether or not an account has it.
    pub sign_in_attempts_per_email: ServiceClass,
    /// Password hashes and other CPU-heavy steps of requests that may run at once, on blocking threads (0:
    /// one fewer than the machine's cores, at least one), so the HTTP runtime always keeps a core.
    pub cpu_heavy_threads: usize,
    /// Deprecations this deployment announces (`[[deprecations]]`: `operation_id`, `deprecated_at`,
    /// optional `sunset_at` and `successor`, `reason`): published in the change ledger, and announced on the
    /// operation's responses with `Deprecation` and `Sunset` headers. Every node of a cluster must carry the
    /// same list. A deprecation changes nothing an operation does or who may call it.
    pub deprecations: Vec<crate::change_ledger::Deprecation>,
    /// The `iso20022` connector (`[iso20022]`): payments leave as `pain.001` files in a directory a bank's
    /// host-to-host agent or EBICS client collects from; status reports and statements come back through
    /// another. Absent, the connector does not exist.
    pub iso20022: Option<BankFiles>,
    /// Whether this node runs the bank file worker (files out, messages in) when the connector is
    /// configured (on by default; any number of nodes may).
    pub bank_file_worker: bool,
    /// The transparency log (`[evidence]`, see `evidence`).
    pub evidence: Evidence,
}

/// The transparency log's settings. Every node of a deployment must carry the same (they name and sign the
/// same logs).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Evidence {
    /// The log's name: its checkpoints' key name, and each workspace log's origin is `<name>/<workspace id>`.
    /// Set it once and keep it (a verifier checks the origin); by default the host of `public_url`, else
    /// `fiscus.localhost`.
    pub log_name: Option<String>,
    /// How often each workspace's log gets a new signed checkpoint when it grew (a client may also ask for
    /// one at any time).
    pub checkpoint_interval_seconds: u64,
    /// Witnesses (C2SP `tlog-witness`) asked to cosign each new checkpoint (`[[evidence.witnesses]]`).
    pub witnesses: Vec<Witness>,
    /// Whether writes put their leaves in the log (on). Off exists only to measure what the log costs
    /// (`bench/evidence.sh`): nothing written meanwhile can be proved, and `fiscus verify evidence` names
    /// every such record.
    pub log: bool,
}

impl Default for Evidence {
    fn default() -> Self {
        Evidence { log_name: None, checkpoint_interval_seconds: 60, witnesses: Vec::new(), log: true }
    }
}

/// A witness: where its `add-checkpoint` endpoint is and its verifier key (`<name>+<key id>+<key>`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Witness {
    pub url: String,
    pub key: String,
}

/// Where the `iso20022` connector writes and reads. Each workspace and environment has its own
/// subdirectory (`<dir>/<workspace>/<environment>/`) in each, so one bank channel never sees another
/// workspace's files.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BankFiles {
    /// Where finished `pain.001` files appear, each whole (renamed into place, never written in place).
    pub outbound_dir: PathBuf,
    /// Where files are written before the rename: on the same filesystem as `outbound_dir` (checked at
    /// start), since only a rename within one filesystem is atomic.
    pub staging_dir: PathBuf,
    /// Where the bank's `pain.002` status reports and `camt.053`/`camt.054` statements are dropped; each
    /// file read is moved to `processed/` (or `refused/`, with a `.reason` beside it) in its directory.
    pub inbound_dir: Option<PathBuf>,
    /// The largest inbound file read, in bytes (8 MiB unless set: a `camt.053` of about 5,000 entries); a
    /// larger one is refused with that reason and never read past the limit.
    #[serde(default = "default_inbound_max_bytes")]
    pub inbound_max_bytes: u64,
    /// The initiating party's name in every file's group header (`InitgPty/Nm`).
    pub initiating_party: String,
    /// Whether sandbox payments use the connector too (a bank's test channel); off, the connector serves
    /// production only.
    #[serde(default)]
    pub sandbox: bool,
}

fn default_inbound_max_bytes() -> u64 {
    8 * 1024 * 1024
}

pub const DEFAULT_SERVICE_CLASS: &str = "standard";

/// A queue driver for asynchronous Agent Space runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentQueue {
    /// Queued in the database, claimed with `FOR UPDATE SKIP LOCKED` by any node.
    Database,
    /// No queue driver: `async` runs are refused (503); `auto` runs are answered in the request.
    None,
}

impl Default for Settings {
    fn default() -> Self {
        let mut service_classes = BTreeMap::new();
        service_classes.insert(DEFAULT_SERVICE_CLASS.to_string(), ServiceClass { quota: 6_000, window_seconds: 60 });
        service_classes.insert("elevated".to_string(), ServiceClass { quota: 60_000, window_seconds: 60 });
        Settings {
            bind: "127.0.0.1:8080".into(),
            data_dir: PathBuf::from("./fiscus-data"),
            database_url: None,
            database_max_connections: 16,
            group_commit: true,
            secret_key_file: None,
            access_token_ttl_seconds: 3600,
            body_limit_bytes: 1024 * 1024,
            body_bytes_in_flight: 64 * 1024 * 1024,
            body_bytes_in_flight_per_workspace: 32 * 1024 * 1024,
            body_admission_wait_ms: 2000,
            idempotency_retention_seconds: 24 * 3600,
            idempotency_stale_seconds: 60,
            service_classes,
            region: "local".into(),
            log_format: "json".into(),
            shutdown_grace_seconds: 30,
            shutdown_drain_seconds: 0,
            console_idle_seconds: 15 * 60,
            console_absolute_seconds: 8 * 3600,
            console_max_failures: 5,
            worker_interval_ms: 500,
            approval_quorum_t1: 1,
            approval_quorum_t2: 2,
            public_url: None,
            audit_anchor_file: None,
            audit_anchor_interval_seconds: 5,
            max_connections: 10_000,
            header_read_timeout_seconds: 10,
            body_read_timeout_seconds: 10,
            body_min_bytes_per_second: 1000,
            unauthenticated_connections_per_address: 256,
            signature_window_seconds: 300,
            webhooks_allow_loopback: false,
            iso20022: None,
            bank_file_worker: true,
            evidence: Evidence::default(),
            webhook_hosts: BTreeMap::new(),
            webhook_worker: true,
            compute_worker: true,
            workflow_worker: true,
            agent_worker: true,
            agent_queue: AgentQueue::Database,
            agent_capacity: 16,
            speech_library: None,
            speech_model_dir: PathBuf::from(fiscus_speech::DEFAULT_MODEL_DIR),
            compute_threads: 0,
            compute_jobs_per_workspace: 0,
            inline_compute_budget_ms: 3000,
            runs_per_workspace: 2,
            webhook_queues_per_workspace: 8,
            webhook_timeout_seconds: 10,
            webhook_claim_stale_seconds: 60,
            webhook_log_retention_days: 30,
            token_requests_per_client: ServiceClass { quota: 60, window_seconds: 60 },
            token_requests_per_address: ServiceClass { quota: 600, window_seconds: 60 },
            sign_in_attempts_per_address: ServiceClass { quota: 30, window_seconds: 60 },
            sign_in_attempts_per_email: ServiceClass { quota: 10, window_seconds: 60 },
            cpu_heavy_threads: 0,
            deprecations: Vec::new(),
        }
    }
}

impl Settings {
    /// Settings from a TOML file's text (unset keys keep their defaults, unknown keys are refused). Parsed
    /// here rather than by the binary: deserializing is generic over the format, so the instance for TOML
    /// (the largest single function of the binary) is compiled once, in this crate.
    pub fn from_toml(text: &str) -> Result<Settings, toml::de::Error> {
        toml::from_str(text)
    }

    /// The database URL in force: the configured one, or the SQLite file in the data directory.
    pub fn effective_database_url(&self) -> String {
        match &self.database_url {
            Some(url) => url.clone(),
            None => format!("sqlite://{}", self.data_dir.join("fiscus.db").display()),
        }
    }

    /// Where people reach this service: `public_url`, or `http://<bind>` (a wildcard bind address is shown
    /// as `localhost`, since nobody can browse to `0.0.0.0`).
    pub fn public_base_url(&self) -> String {
        if let Some(url) = &self.public_url {
            return url.trim_end_matches('/').to_string();
        }
        let bind = match self.bind.rsplit_once(':') {
            Some(("0.0.0.0" | "[::]", port)) => format!("localhost:{port}"),
            _ => self.bind.clone(),
        };
        format!("http://{bind}")
    }

    /// The transparency log's name (see [`Evidence::log_name`]).
    pub fn log_name(&self) -> String {
        if let Some(name) = &self.evidence.log_name {
            return name.clone();
        }
        self.public_url
            .as_deref()
            .and_then(|u| reqwest::Url::parse(u).ok())
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_else(|| "fiscus.localhost".to_string())
    }

    pub fn audit_anchor_path(&self) -> PathBuf {
        self.audit_anchor_file.clone().unwrap_or_else(|| self.data_dir.join("audit-anchor.json"))
    }

    pub fn secret_key_path(&self) -> PathBuf {
        self.secret_key_file.clone().unwrap_or_else(|| self.data_dir.join("secret.key"))
    }

    /// The class an application's name resolves to; an unknown name gets the default class, never an
    /// unlimited one.
    pub fn service_class(&self, name: &str) -> (String, ServiceClass) {
        match self.service_classes.get(name) {
            Some(class) => (name.to_string(), class.clone()),
            None => {
                let class = self
                    .service_classes
                    .get(DEFAULT_SERVICE_CLASS)
                    .cloned()
                    .unwrap_or(ServiceClass { quota: 6_000, window_seconds: 60 });
                (DEFAULT_SERVICE_CLASS.to_string(), class)
            }
        }
    }
}
