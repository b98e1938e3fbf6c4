//! Executing one step: reading a pinned series, measuring it with the engine, checking a measure, sealing
//! a report. Runs and campaigns execute the same way; a campaign's waits, reviews and reports are virtual.
//!
//! A read step's output carries the values it read, so every later step computes from recorded outputs
//! only: a run resumed on another node after a crash computes exactly what the first would have.

use crate::rules::workflows::definition::{Check, Definition, Measure, MeasureKind, OnFail, Report, Step};
use crate::rules::workflows::records::InputPin;
use crate::rules::workflows::run::StepOutcome;
use fiscus_data_core::rules::Kind;
use fiscus_data_core::tables::market::{self, Rows, Window};
use fiscus_data_core::tables::{datasets, economics};
use fiscus_quant::risk::DrawdownStart;
use fiscus_store::StoreError;
use serde_json::{Value, json};
use std::collections::HashMap;

use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;

/// The most rows a read step looks through (its series' whole dataset; the newest `observations` are kept).
const MAX_ROWS: u32 = 200_000;

/// Pins every read step's source to its newest observed dataset (422 naming the step when it has none).
pub async fn pin(services: &Services, workspace_id: &str, definition: &Definition) -> Result<Vec<InputPin>, Failure> {
    let mut conn = services.store.read().await?;
    let mut pins = Vec::new();
    for step in &definition.steps {
        let (source, number) = match step {
            Step::ReadPrices(s) => {
                fiscus_kernel::inputs::entitled(services, workspace_id, Kind::Prices).await?;
                let instrument = match market::get_instrument(&mut conn, workspace_id, &s.instrument).await {
                    Err(StoreError::NotFound) => {
                        return Err(unread(&s.id, format!("no instrument `{}`", s.instrument)));
                    }
                    other => other?,
                };
                let number = market::latest_dataset(&mut conn, workspace_id, Rows::Prices, &instrument.id).await?;
                let Some(number) = number else {
                    return Err(unread(&s.id, format!("`{}` has no prices in this workspace", s.instrument)));
                };
                (s.instrument.clone(), number)
            }
            Step::ReadSeries(s) => {
                fiscus_kernel::inputs::entitled(services, workspace_id, Kind::Economics).await?;
                match economics::get(&mut conn, workspace_id, &s.series, None).await {
                    Err(StoreError::NotFound) => {
                        return Err(unread(&s.id, format!("no economic series `{}`", s.series)));
                    }
                    other => (s.series.clone(), other?.dataset_number),
                }
            }
            _ => continue,
        };
        let d = datasets::get(&mut conn, services.store.seal_key(), workspace_id, number).await?;
        if d.provenance != fiscus_data_core::rules::Provenance::Observed {
            return Err(unread(
                step.id(),
                format!("dataset {number} ({}) is synthetic; workflows read observed data", d.name),
            ));
        }
        pins.push(InputPin { step: step.id().to_string(), source, dataset: number, content_hash: d.content_hash });
    }
    Ok(pins)
}

fn unread(step: &str, why: String) -> Failure {
    Failure::Invalid(vec![("definition", format!("step `{step}`: {why}"))])
}

/// Reads a step's pinned series: the newest `observations` values (at least two), oldest first.
pub async fn read(
    services: &Services,
    workspace_id: &str,
    step: &Step,
    pin: &InputPin,
) -> Result<(StepOutcome, Value), Failure> {
    let mut conn = services.store.read().await?;
    let d = datasets::get(&mut conn, services.store.seal_key(), workspace_id, pin.dataset).await?;
    // Entitlement is read at each step, not when the run was queued (issue 54).
    fiscus_kernel::inputs::entitled(services, workspace_id, d.kind).await?;
    if d.content_hash != pin.content_hash {
        return Err(Failure::internal(format!("dataset {} no longer hashes to its pin", pin.dataset)));
    }
    let mut points: Vec<(String, f64)> = Vec::new();
    let wanted = match step {
        Step::ReadPrices(s) if d.kind == Kind::Prices => {
            let instrument = market::get_instrument(&mut conn, workspace_id, &s.instrument).await?;
            let bars =
                market::bars(&mut conn, workspace_id, &instrument.id, pin.dataset, Window::default(), MAX_ROWS).await?;
            for b in bars {
                if let Some(v) = b.adj_close.as_deref().or(b.close.as_deref()).and_then(|v| v.parse::<f64>().ok()) {
                    points.push((b.date, v));
                }
            }
            s.observations
        }
        Step::ReadSeries(s) if d.kind == Kind::Economics => {
            let rows =
                economics::observations(&mut conn, workspace_id, &s.series, pin.dataset, Window::default(), MAX_ROWS)
                    .await?;
            for o in rows {
                if let Ok(v) = o.value.parse::<f64>() {
                    points.push((o.date, v));
                }
            }
            s.observations
        }
        _ => return Err(Failure::internal(format!("step {} is not a read of dataset {}", step.id(), pin.dataset))),
    };
    points.retain(|(_, v)| v.is_finite());
    let skip = points.len().saturating_sub(wanted as usize);
    let points = &points[skip..];
    if points.len() < 2 {
        return Ok(failed(format!(
            "`{}` has {} observation(s) in dataset {}; at least 2 are needed",
            pin.source,
            points.len(),
            pin.dataset
        )));
    }
    Ok((
        StepOutcome::Completed,
        json!({
            "source": pin.source,
            "dataset": pin.dataset,
            "content_hash": pin.content_hash,
            "observations": points.len(),
            "first_date": points[0].0,
            "last_date": points[points.len() - 1].0,
            "values": points.iter().map(|(_, v)| *v).collect::<Vec<f64>>(),
        }),
    ))
}

fn failed(reason: String) -> (StepOutcome, Value) {
    (StepOutcome::Failed, json!({ "error": reason }))
}

/// Computes a measure, check or report from earlier outputs (`outputs`, by step id). `virtual_artifacts`:
/// a campaign's report is hashed, not kept.
pub fn compute(step: &Step, outputs: &HashMap<String, Value>, virtual_artifacts: bool) -> (StepOutcome, Value) {
    match step {
        Step::Measure(m) => measure(m, outputs),
        Step::Check(c) => check(c, outputs),
        Step::Report(r) => report(r, outputs, virtual_artifacts),
        other => failed(format!("step `{}` ({}) is not computed", other.id(), other.kind().as_str())),
    }
}

fn measure(m: &Measure, outputs: &HashMap<String, Value>) -> (StepOutcome, Value) {
    let values: Vec<f64> = outputs
        .get(&m.input)
        .and_then(|o| o.get("values"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    if values.len() < 2 {
        return failed(format!("`{}` recorded fewer than two values", m.input));
    }
    let returns = || fiscus_quant::returns::simple_returns(&values);
    let result: Result<f64, fiscus_quant::QuantError> = match m.measure {
        MeasureKind::Last => Ok(values[values.len() - 1]),
        MeasureKind::Mean => Ok(values.iter().sum::<f64>() / values.len() as f64),
        MeasureKind::Change => Ok(values[values.len() - 1] / values[0] - 1.0),
        MeasureKind::Volatility => returns().and_then(|r| fiscus_quant::risk::annual_volatility(&r, 252.0)),
        MeasureKind::ValueAtRisk95 => {
            returns().and_then(|r| fiscus_quant::value_at_risk::historical(&r, 0.05)).map(|t| -t.var)
        }
        MeasureKind::MaxDrawdown => {
            returns().and_then(|r| fiscus_quant::risk::max_drawdown(&r, DrawdownStart::BeforeFirstReturn)).map(|d| -d)
        }
    };
    match result {
        Ok(v) if v.is_finite() => (
            StepOutcome::Completed,
            json!({"measure": m.measure.as_str(), "input": m.input, "observations": values.len(), "value": v}),
        ),
        Ok(_) => failed(format!("{} of `{}` is not a finite number", m.measure.as_str(), m.input)),
        Err(e) => failed(format!("the engine refused {} of `{}`: {e}", m.measure.as_str(), m.input)),
    }
}

fn check(c: &Check, outputs: &HashMap<String, Value>) -> (StepOutcome, Value) {
    let Some(value) = outputs.get(&c.input).and_then(|o| o.get("value")).and_then(Value::as_f64) else {
        return failed(format!("`{}` recorded no value", c.input));
    };
    let passed = c.comparison.holds(value, c.limit);
    let output =
        json!({"input": c.input, "value": value, "comparison": c.comparison, "limit": c.limit, "passed": passed});
    if passed || c.on_fail == OnFail::Continue {
        (StepOutcome::Completed, output)
    } else {
        (StepOutcome::Failed, output)
    }
}

fn report(r: &Report, outputs: &HashMap<String, Value>, virtual_artifact: bool) -> (StepOutcome, Value) {
    let mut contents = serde_json::Map::new();
    for step in &r.include {
        match outputs.get(step) {
            Some(o) => contents.insert(step.clone(), o.clone()),
            None => return failed(format!("`{step}` recorded no output")),
        };
    }
    let artifact = json!({"title": r.title, "contents": contents});
    let hash = match crate::workflows::canonical("report", &artifact) {
        Ok((_, hash)) => hash,
        Err(_) => return failed("the report could not be put in canonical form".into()),
    };
    if virtual_artifact {
        (StepOutcome::Completed, json!({"title": r.title, "artifact_hash": hash, "virtual": true}))
    } else {
        (StepOutcome::Completed, json!({"title": r.title, "artifact_hash": hash, "artifact": artifact}))
    }
}

/// `sha256:` over `[[step, output_hash], …]` in order (RFC 8785): a run's or a case's evidence.
pub fn evidence_hash(steps: &[(String, String)]) -> Result<String, Failure> {
    let pairs: Vec<Value> = steps.iter().map(|(s, h)| json!([s, h])).collect();
    Ok(crate::workflows::canonical("evidence", &Value::Array(pairs))?.1)
}
