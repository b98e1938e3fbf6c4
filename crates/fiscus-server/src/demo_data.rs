//! The demo's data: the real series shipped in the project's `data/` folder (see `data/README.md` for
//! each file's source and licence), embedded in the binary so the demo works offline from any directory,
//! and a sample ledger for finance core that is labelled synthetic (it was written for the demo, not
//! observed).

use fiscus_data_core::rules::values::DateFormat;
use fiscus_data_core::rules::{Kind, Provenance};
use fiscus_store::Store;
use std::collections::BTreeMap;

use fiscus_data::import::{self, ImportRequest, Mapping, Outcome, Progress};
use fiscus_kernel::governed::Caller;

struct DemoFile {
    kind: Kind,
    file: &'static str,
    bytes: &'static [u8],
    source: &'static str,
    licence: &'static str,
    provenance: Provenance,
    symbol: Option<&'static str>,
    wide: Option<&'static str>,
    columns: &'static [(&'static str, &'static str)],
    key_prefix: &'static str,
    units: &'static str,
    titles: &'static [(&'static str, &'static str)],
    date_format: Option<DateFormat>,
}

const fn file(
    kind: Kind,
    file: &'static str,
    bytes: &'static [u8],
    source: &'static str,
    licence: &'static str,
) -> DemoFile {
    DemoFile {
        kind,
        file,
        bytes,
        source,
        licence,
        provenance: Provenance::Observed,
        symbol: None,
        wide: None,
        columns: &[],
        key_prefix: "",
        units: "",
        titles: &[],
        date_format: None,
    }
}

const SAMPLE: &str = "Fiscus sample ledger: illustrative figures written for the demo, not observed";
/// The demo's portfolio book: holdings written for the demo (each lot's cost is its quantity at the
/// observed adjusted close of its acquisition date, so gains read true against the shipped prices).
const BOOK: &str = "Fiscus sample portfolio book: illustrative holdings written for the demo, not observed";

fn files() -> Vec<DemoFile> {
    vec![
        DemoFile {
            ..file(
                Kind::Instruments,
                "reference/instruments.csv",
                include_bytes!("../../../data/reference/instruments.csv"),
                "Fiscus demo reference data: names, listings and sectors as the issuers publish them",
                "CC0-1.0",
            )
        },
        DemoFile {
            wide: Some("adj_close"),
            ..file(
                Kind::Prices,
                "market/us_large_caps_20_daily_adjclose.csv",
                include_bytes!("../../../data/market/us_large_caps_20_daily_adjclose.csv"),
                "skfolio 1.12.2 datasets/data/sp500_dataset.csv.gz",
                "BSD-3-Clause",
            )
        },
        DemoFile {
            symbol: Some("SPX"),
            ..file(
                Kind::Prices,
                "market/sp500_ohlcv_daily_1999_2018.csv",
                include_bytes!("../../../data/market/sp500_ohlcv_daily_1999_2018.csv"),
                "arch 8.0.0 data/sp500",
                "NCSA",
            )
        },
        DemoFile {
            symbol: Some("SPX"),
            columns: &[("close", "SP500")],
            ..file(
                Kind::Prices,
                "market/sp500_index_daily.csv",
                include_bytes!("../../../data/market/sp500_index_daily.csv"),
                "skfolio 1.12.2 datasets/data/sp500_index.csv.gz",
                "BSD-3-Clause",
            )
        },
        DemoFile {
            wide: Some("adj_close"),
            ..file(
                Kind::Prices,
                "market/factor_etfs_daily_adjclose.csv",
                include_bytes!("../../../data/market/factor_etfs_daily_adjclose.csv"),
                "skfolio 1.12.2 datasets/data/factors_dataset.csv.gz",
                "BSD-3-Clause",
            )
        },
        DemoFile {
            key_prefix: "ff3_",
            units: "percent",
            date_format: Some(DateFormat::YearMonth),
            titles: &[
                ("Mkt-RF", "Fama-French market return in excess of the risk-free rate"),
                ("SMB", "Fama-French small minus big"),
                ("HML", "Fama-French high minus low"),
                ("RF", "Risk-free rate (one-month Treasury bill)"),
            ],
            ..file(
                Kind::Economics,
                "economics/fama_french_3factor_monthly.csv",
                include_bytes!("../../../data/economics/fama_french_3factor_monthly.csv"),
                "arch 8.0.0 data/frenchdata (Kenneth R. French Data Library)",
                "NCSA",
            )
        },
        DemoFile {
            units: "index 1982-1984=100",
            titles: &[("CPILFESL", "US CPI for all urban consumers: all items less food and energy")],
            ..file(
                Kind::Economics,
                "economics/us_core_cpi_monthly.csv",
                include_bytes!("../../../data/economics/us_core_cpi_monthly.csv"),
                "arch 8.0.0 data/core_cpi (FRED CPILFESL)",
                "NCSA",
            )
        },
        DemoFile {
            key_prefix: "moodys_",
            units: "percent",
            titles: &[
                ("AAA", "Moody's seasoned Aaa corporate bond yield"),
                ("BAA", "Moody's seasoned Baa corporate bond yield"),
            ],
            ..file(
                Kind::Economics,
                "economics/us_corporate_bond_yields_monthly.csv",
                include_bytes!("../../../data/economics/us_corporate_bond_yields_monthly.csv"),
                "arch 8.0.0 data/default",
                "NCSA",
            )
        },
        DemoFile {
            units: "USD per barrel",
            titles: &[("DCOILWTICO", "Crude oil spot price: West Texas Intermediate, Cushing, Oklahoma")],
            ..file(
                Kind::Economics,
                "economics/wti_crude_daily.csv",
                include_bytes!("../../../data/economics/wti_crude_daily.csv"),
                "arch 8.0.0 data/wti (FRED DCOILWTICO)",
                "NCSA",
            )
        },
        DemoFile {
            key_prefix: "bls_",
            units: "thousands of persons",
            columns: &[("date", "month")],
            ..file(
                Kind::Economics,
                "economics/us_employment_monthly_2006_2015.csv",
                include_bytes!("../../../data/economics/us_employment_monthly_2006_2015.csv"),
                "vega_datasets 0.9.0 us-employment.csv (BLS)",
                "public domain (BLS)",
            )
        },
        DemoFile {
            key_prefix: "macro_",
            units: "as published by statsmodels macrodata (see its documentation per column)",
            columns: &[("date", "year+quarter")],
            ..file(
                Kind::Economics,
                "economics/us_macro_quarterly_1959_2009.csv",
                include_bytes!("../../../data/economics/us_macro_quarterly_1959_2009.csv"),
                "statsmodels 0.15.0 datasets/macrodata",
                "public domain (statsmodels)",
            )
        },
        DemoFile {
            provenance: Provenance::Synthetic,
            ..file(
                Kind::Ledgers,
                "finance-core/sample_ledgers.csv",
                include_bytes!("../../../data/finance-core/sample_ledgers.csv"),
                SAMPLE,
                "CC0-1.0",
            )
        },
        DemoFile {
            provenance: Provenance::Synthetic,
            ..file(
                Kind::Entities,
                "finance-core/sample_entities.csv",
                include_bytes!("../../../data/finance-core/sample_entities.csv"),
                SAMPLE,
                "CC0-1.0",
            )
        },
        DemoFile {
            provenance: Provenance::Synthetic,
            ..file(
                Kind::Journals,
                "finance-core/sample_journals.csv",
                include_bytes!("../../../data/finance-core/sample_journals.csv"),
                SAMPLE,
                "CC0-1.0",
            )
        },
        DemoFile {
            provenance: Provenance::Synthetic,
            ..file(
                Kind::Transactions,
                "finance-core/sample_transactions.csv",
                include_bytes!("../../../data/finance-core/sample_transactions.csv"),
                SAMPLE,
                "CC0-1.0",
            )
        },
        DemoFile {
            provenance: Provenance::Synthetic,
            ..file(
                Kind::Balances,
                "finance-core/sample_balances.csv",
                include_bytes!("../../../data/finance-core/sample_balances.csv"),
                SAMPLE,
                "CC0-1.0",
            )
        },
        DemoFile {
            provenance: Provenance::Synthetic,
            ..file(
                Kind::Portfolios,
                "investment/sample_portfolios.csv",
                include_bytes!("../../../data/investment/sample_portfolios.csv"),
                BOOK,
                "CC0-1.0",
            )
        },
        DemoFile {
            provenance: Provenance::Synthetic,
            ..file(
                Kind::Lots,
                "investment/sample_lots.csv",
                include_bytes!("../../../data/investment/sample_lots.csv"),
                BOOK,
                "CC0-1.0",
            )
        },
        DemoFile {
            provenance: Provenance::Synthetic,
            ..file(
                Kind::Positions,
                "investment/sample_positions.csv",
                include_bytes!("../../../data/investment/sample_positions.csv"),
                BOOK,
                "CC0-1.0",
            )
        },
        DemoFile {
            provenance: Provenance::Synthetic,
            ..file(
                Kind::Cash,
                "investment/sample_cash.csv",
                include_bytes!("../../../data/investment/sample_cash.csv"),
                BOOK,
                "CC0-1.0",
            )
        },
    ]
}

/// Imports the demo data into a workspace; files already imported are found by hash and skipped, so
/// loading twice changes nothing.
pub fn load<'a>(
    store: &'a Store,
    caller: &'a Caller,
    workspace_id: &'a str,
    progress: &'a dyn Progress,
) -> fiscus_store::Boxed<'a, Result<Vec<Outcome>, import::Failure>> {
    Box::pin(async move {
        let mut out = Vec::new();
        for f in files() {
            let mapping = Mapping {
                columns: f.columns.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
                symbol: f.symbol.map(str::to_string),
                wide: f.wide.map(str::to_string),
                date_format: f.date_format,
                delimiter: b',',
                key_prefix: f.key_prefix.to_string(),
                units: f.units.to_string(),
                titles: f.titles.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<BTreeMap<_, _>>(),
                create_instruments: None,
            };
            let req = ImportRequest {
                kind: f.kind,
                file_name: f.file.to_string(),
                input: f.bytes.to_vec().into(),
                dataset: None,
                source: f.source.to_string(),
                licence: f.licence.to_string(),
                provenance: f.provenance,
                mapping,
                dry_run: false,
            };
            out.push(import::import(store, caller, workspace_id, req, progress).await?);
        }
        Ok(out)
    })
}
