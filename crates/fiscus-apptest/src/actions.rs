//! A Financial Action's bodies as the tests send them: a proposal (a T1 payment) and a check result.

use serde_json::{Value, json};

pub fn proposal() -> Value {
    json!({
        "kind": "payment",
        "amount_minor": 125000,
        "currency": "USD",
        "counterparty": "cp_acme",
        "connector": "sandbox",
        "execution_mode": "human_approved",
        "risk_tier": "T1",
        "reference": "INV-1",
        "required_checks": ["sanctions_screening"],
    })
}

pub fn check(status: &str) -> Value {
    json!({
        "check_key": "sanctions_screening",
        "status": status,
        "source_type": "screening_report",
        "source_reference": "screening://runs/1",
        "source_hash": format!("sha256:{}", "cd".repeat(32)),
        "metrics": [],
        "metadata": [],
    })
}
