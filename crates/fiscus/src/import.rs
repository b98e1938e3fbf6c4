//! `fiscus import` and `fiscus demo load`: files into datasets, with a progress line on a terminal.

use anyhow::{Context, bail};
use clap::Args;
use fiscus_data::import::{self, ImportRequest, Mapping, Outcome, Progress};
use fiscus_data_core::rules::values::DateFormat;
use fiscus_data_core::rules::{Kind, Provenance};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// instruments, prices, corporate-actions, fundamentals, economics, ledgers, entities, journals,
    /// transactions, balances, portfolios, lots, positions or cash; or counterparties or bank-accounts
    /// (master data for payments: accounts arrive pending, for a person to approve at the console); or
    /// bank-messages (the bank's pain.002 status reports and camt.053/camt.054 statements, XML).
    pub kind: String,
    /// CSV files; each becomes its own dataset (or a new version of it).
    #[arg(required = true)]
    pub files: Vec<std::path::PathBuf>,
    #[arg(long)]
    pub workspace: String,
    /// The dataset's name (one file only); the file's name otherwise.
    #[arg(long)]
    pub dataset: Option<String>,
    /// Where the data comes from (a vendor, a package and version, a URL).
    #[arg(long)]
    pub source: Option<String>,
    /// The data's licence (an SPDX identifier where there is one).
    #[arg(long)]
    pub licence: Option<String>,
    /// The rows were generated, not observed: they can never feed an operation that needs observations.
    #[arg(long)]
    pub synthetic: bool,
    /// Maps a field to a header: `--map close="Close Price"`; `--map date=year+quarter` for quarterly files.
    #[arg(long = "map", value_name = "FIELD=HEADER")]
    pub map: Vec<String>,
    /// The symbol of a file of one instrument without a symbol column.
    #[arg(long)]
    pub symbol: Option<String>,
    /// Prices in wide form: every column but the date is a symbol holding this field (adj_close or close).
    #[arg(long)]
    pub wide: Option<String>,
    /// iso, mdy, yyyymm, or a strftime pattern such as `%b %-d %Y` (detected from the first date when not
    /// given among the built-in ones).
    #[arg(long)]
    pub date_format: Option<String>,
    /// The field delimiter (one character; `\t` for tab).
    #[arg(long, default_value = ",")]
    pub delimiter: String,
    /// Economics: prefix of every series key.
    #[arg(long, default_value = "")]
    pub key_prefix: String,
    /// Economics: the series' units.
    #[arg(long, default_value = "")]
    pub units: String,
    /// Economics: a series' title by its header: `--title CPILFESL="Core CPI"`.
    #[arg(long = "title", value_name = "HEADER=TITLE")]
    pub titles: Vec<String>,
    /// Prices: create the instruments the file names and the workspace lacks (an instruments dataset of
    /// their own, named by their symbols, its source naming this file) instead of refusing their rows.
    #[arg(long)]
    pub create_instruments: bool,
    /// With --create-instruments: their asset class (equity, etf, index, fund, bond, commodity, fx, crypto).
    #[arg(long, default_value = "equity")]
    pub instrument_class: String,
    /// With --create-instruments: their currency.
    #[arg(long, default_value = "USD")]
    pub instrument_currency: String,
    /// Check everything, write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Counterparties, bank accounts and bank messages: the environment they belong to (sandbox or
    /// production).
    #[arg(long, default_value = "sandbox")]
    pub environment: String,
}

/// `fiscus import counterparties|bank-accounts`: each file in one transaction, as the CLI's operator.
async fn run_master_data(services: &fiscus_kernel::Services, args: &ImportArgs) -> anyhow::Result<bool> {
    use fiscus_actions::master_data::{import_bank_accounts, import_counterparties};
    let Some(environment) = fiscus_domain::credentials::Environment::parse(&args.environment) else {
        bail!("--environment `{}` must be sandbox or production", args.environment);
    };
    if args.dry_run {
        bail!("--dry-run is for datasets; master data is checked whole and written whole, or not at all");
    }
    let tenant = fiscus_domain::tenancy::Tenant { workspace_id: args.workspace.clone(), environment };
    let caller = fiscus_kernel::governed::Caller::bare(fiscus_domain::actor::Actor::cli());
    let mut ok = true;
    for file in &args.files {
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        let result = if args.kind == "counterparties" {
            import_counterparties(&services.store, &tenant, &caller, &bytes).await
        } else {
            import_bank_accounts(&services.store, &tenant, &caller, &bytes).await
        };
        match result {
            Ok(done) if args.kind == "counterparties" => {
                println!(
                    "{}: {} counterparties created, {} already present",
                    file.display(),
                    done.created,
                    done.present
                )
            }
            Ok(done) => println!(
                "{}: {} bank accounts proposed (pending: a person approves each at the console), {} already present",
                file.display(),
                done.created,
                done.present
            ),
            Err(e) => {
                eprintln!("{}: nothing imported: {e}", file.display());
                ok = false;
            }
        }
    }
    Ok(ok)
}

/// `fiscus import bank-messages`: each file one message, imported in its own transaction, as the CLI's
/// operator; what each did is printed.
async fn run_bank_messages(services: &fiscus_kernel::Services, args: &ImportArgs) -> anyhow::Result<bool> {
    use fiscus_actions::rules::bank_files::Outcome;
    let Some(environment) = fiscus_domain::credentials::Environment::parse(&args.environment) else {
        bail!("--environment `{}` must be sandbox or production", args.environment);
    };
    let tenant = fiscus_domain::tenancy::Tenant { workspace_id: args.workspace.clone(), environment };
    let caller = fiscus_kernel::governed::Caller::bare(fiscus_domain::actor::Actor::cli());
    let mut ok = true;
    for file in &args.files {
        let xml = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        match fiscus_actions::bank_messages::import(services, &tenant, &caller, &xml).await {
            Ok(done) if done.duplicate => {
                println!("{}: imported before as {}; nothing changed", file.display(), done.message.id)
            }
            Ok(done) => {
                let items = &done.message.body.items;
                let count = |o: Outcome| items.iter().filter(|i| i.outcome == o).count();
                println!(
                    "{}: {} {}: {} completed, {} rejected, {} exceptions, {} unmatched, {} accepted, {} ignored",
                    file.display(),
                    done.message.body.kind.as_str(),
                    done.message.id,
                    count(Outcome::Completed),
                    count(Outcome::Rejected),
                    count(Outcome::Exception),
                    count(Outcome::Unmatched),
                    count(Outcome::Accepted),
                    count(Outcome::Ignored),
                );
            }
            Err(e) => {
                let why = fiscus_actions::bank_messages::refusal(e).map_err(|e| anyhow::anyhow!("{e:?}"))?;
                eprintln!("{}: nothing imported: {why}", file.display());
                ok = false;
            }
        }
    }
    Ok(ok)
}

/// A progress line: rows/s and an ETA on a terminal (redrawn in place), a plain line per stage otherwise.
pub struct Bar {
    label: String,
    tty: bool,
    started: Instant,
    last: Mutex<(Option<&'static str>, Instant)>,
}

impl Bar {
    pub fn new(label: String) -> Bar {
        Bar {
            label,
            tty: std::io::stderr().is_terminal(),
            started: Instant::now(),
            last: Mutex::new((None, Instant::now())),
        }
    }
}

impl Progress for Bar {
    fn update(&self, stage: &'static str, done: u64, total: u64) {
        let Ok(mut last) = self.last.lock() else { return };
        let now = Instant::now();
        let elapsed = self.started.elapsed().as_secs_f64().max(1e-6);
        if self.tty {
            if last.0 == Some(stage) && now.duration_since(last.1).as_millis() < 100 && done < total {
                return;
            }
            let rate = done as f64 / elapsed;
            let eta = if rate > 0.0 && total > done {
                format!(", ETA {:.1} s", (total - done) as f64 / rate)
            } else {
                String::new()
            };
            let _ = write!(
                std::io::stderr(),
                "\r\x1b[2K{}: {stage} {done}/{total} rows ({rate:.0} rows/s{eta})",
                self.label
            );
        } else if last.0 != Some(stage) {
            let _ = writeln!(std::io::stderr(), "{}: {stage} ({total} rows, {:.1} s)", self.label, elapsed);
        }
        *last = (Some(stage), now);
    }
}

impl Bar {
    fn finish(&self) {
        if self.tty {
            let _ = writeln!(std::io::stderr());
        }
    }
}

fn pairs(values: &[String], what: &str) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    values
        .iter()
        .map(|v| match v.split_once('=') {
            Some((k, val)) if !k.is_empty() => Ok((k.trim().to_string(), val.trim().to_string())),
            _ => bail!("{what} `{v}` must be NAME=VALUE"),
        })
        .collect()
}

/// The quality report in a few lines: each series with findings (the first five), what was found and the
/// first date of each.
fn quality_lines(q: &fiscus_data_core::rules::quality::QualityReport) -> String {
    if q.issues == 0 {
        return format!("\n  quality: {} series checked, nothing to report", q.series);
    }
    let mut out =
        format!("\n  quality: {} finding(s) in {} of {} series checked", q.issues, q.findings.len(), q.series);
    for f in q.findings.iter().take(5) {
        let parts: Vec<String> = [
            ("gap", &f.gaps),
            ("zero value", &f.zero_values),
            ("negative value", &f.negative_values),
            ("missing value", &f.missing_values),
            ("stale run", &f.stale_runs),
            ("outlier", &f.outliers),
        ]
        .iter()
        .filter(|(_, x)| x.count > 0)
        .map(|(what, x)| {
            let s = if x.count == 1 { "" } else { "s" };
            format!("{} {what}{s} (first {})", x.count, x.dates.first().map_or("", String::as_str))
        })
        .collect();
        out.push_str(&format!("\n    {} ({}): {}", f.series, f.frequency.as_str(), parts.join(", ")));
    }
    out
}

pub fn describe(o: &Outcome) -> String {
    let quality = o.quality.as_ref().map(quality_lines).unwrap_or_default();
    let d = &o.dataset;
    let what = if o.dry_run {
        "checked (dry run, nothing written)"
    } else if o.created {
        "imported"
    } else {
        "already imported (same file), nothing written"
    };
    format!(
        "{what}: dataset {} `{}` v{} ({}), {} rows{}, {} {}, period {}..{}, file {}, content {}",
        if o.dry_run { "-".to_string() } else { d.number.to_string() },
        d.name,
        if o.dry_run { "-".to_string() } else { d.version.to_string() },
        d.kind.as_str(),
        d.row_count,
        if d.skipped_count > 0 { format!(" ({} already imported, skipped)", d.skipped_count) } else { String::new() },
        d.provenance.as_str(),
        d.licence,
        d.period_start.as_deref().unwrap_or("-"),
        d.period_end.as_deref().unwrap_or("-"),
        d.file_sha256,
        if d.content_hash.is_empty() { "-" } else { &d.content_hash },
    ) + &quality
}

pub async fn run(services: &fiscus_kernel::Services, args: ImportArgs) -> anyhow::Result<bool> {
    if matches!(args.kind.as_str(), "counterparties" | "bank-accounts") {
        return run_master_data(services, &args).await;
    }
    if args.kind == "bank-messages" {
        return run_bank_messages(services, &args).await;
    }
    let Some(kind) = Kind::parse(&args.kind) else {
        bail!(
            "`{}` is not a kind of import (instruments, prices, corporate-actions, fundamentals, economics, ledgers, entities, journals, transactions, balances, portfolios, lots, positions, cash; counterparties, bank-accounts; bank-messages)",
            args.kind
        );
    };
    if args.dataset.is_some() && args.files.len() > 1 {
        bail!("--dataset names one file's dataset; give one file, or let each file's name be its dataset's");
    }
    let delimiter = match args.delimiter.as_str() {
        "\\t" | "tab" => b'\t',
        d if d.len() == 1 && d.is_ascii() => d.as_bytes()[0],
        d => bail!("--delimiter `{d}` must be one ASCII character"),
    };
    let date_format = match args.date_format.as_deref() {
        None => None,
        Some(f) => Some(DateFormat::parse_name(f).map_err(|e| anyhow::anyhow!("--date-format: {e}"))?),
    };
    if let Some(w) = args.wide.as_deref()
        && !matches!(w, "adj_close" | "close")
    {
        bail!("--wide `{w}` must be adj_close or close");
    }
    let create_instruments = if args.create_instruments {
        Some(fiscus_data::import::new_instruments(&args.instrument_class, &args.instrument_currency).map_err(
            |(flag, e)| {
                anyhow::anyhow!("--instrument-{}: {e}", if flag == "asset_class" { "class" } else { "currency" })
            },
        )?)
    } else {
        None
    };
    let mapping = Mapping {
        create_instruments,
        columns: pairs(&args.map, "--map")?,
        symbol: args.symbol.clone(),
        wide: args.wide.clone(),
        date_format,
        delimiter,
        key_prefix: args.key_prefix.clone(),
        units: args.units.clone(),
        titles: pairs(&args.titles, "--title")?,
    };
    let caller = fiscus_kernel::governed::Caller::bare(fiscus_domain::actor::Actor::cli());
    let mut ok = true;
    for path in &args.files {
        let label = path.display().to_string();
        let size = std::fs::metadata(path).with_context(|| label.clone())?.len();
        if size > 1 << 30 {
            bail!("{label}: the file is larger than 1 GiB; split it");
        }
        let bar = Bar::new(label.clone());
        let req = ImportRequest {
            kind,
            file_name: path.file_name().and_then(|n| n.to_str()).unwrap_or("file.csv").to_string(),
            // Read by the import as it goes (prices stream: a large file is never whole in memory).
            input: import::Input::File(path.clone()),
            dataset: args.dataset.clone(),
            source: args.source.clone().unwrap_or_else(|| format!("file {label}")),
            licence: args.licence.clone().unwrap_or_else(|| "proprietary".to_string()),
            provenance: if args.synthetic { Provenance::Synthetic } else { Provenance::Observed },
            mapping: mapping.clone(),
            dry_run: args.dry_run,
        };
        let result = import::import(&services.store, &caller, &args.workspace, req, &bar).await;
        bar.finish();
        match result {
            Ok(o) => println!("{label}: {}", describe(&o)),
            Err(import::Failure::Invalid { file: _, errors }) => {
                ok = false;
                for e in &errors {
                    eprintln!("{label}: {e}");
                }
                eprintln!("{label}: refused ({} error(s) shown); nothing of this file was imported", errors.len());
            }
            Err(import::Failure::Store(e)) => return Err(e.into()),
        }
    }
    Ok(ok)
}

/// `fiscus demo load`: the demo data into an existing workspace.
pub async fn demo_load(services: &fiscus_kernel::Services, workspace: &str) -> anyhow::Result<()> {
    let caller = fiscus_kernel::governed::Caller::bare(fiscus_domain::actor::Actor::demo());
    let bar = Bar::new(String::from("demo data"));
    let outcomes = fiscus_server::demo_data::load(&services.store, &caller, workspace, &bar).await;
    bar.finish();
    for o in outcomes.map_err(|e| anyhow::anyhow!("{e}"))? {
        println!("{}: {}", o.dataset.file_name, describe(&o));
    }
    Ok(())
}
