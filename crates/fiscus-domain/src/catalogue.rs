//! The operation catalogue: every operation of the API with its method, path and required scope.
//!
//! This one table is the source of truth the router, the scope check, the OpenAPI document and
//! `fiscus catalogue check` all read, so that a route and its scope can never disagree. It holds the 114
//! operations of the seed's catalogue (`shared/spec/operations.tsv`) and the few Fiscus adds, each marked.
//!
//! It is long because it is data: one entry per operation and per scope, kept in one table so that a reader (and
//! `fiscus catalogue check`) sees the catalogue whole.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Method {
    Get,
    Post,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Delete => "DELETE",
        }
    }

    pub fn parse(s: &str) -> Option<Method> {
        match s {
            "GET" => Some(Method::Get),
            "POST" => Some(Method::Post),
            "DELETE" => Some(Method::Delete),
            _ => None,
        }
    }
}

/// The spec's operation groups; each becomes one OpenAPI tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Group {
    AiRuntimeGovernance,
    AgentsMcp,
    CorePlatform,
    DeveloperCommercial,
    FinancialActions,
    FinancialDataPlanning,
    KnowledgeIntelligence,
    LqmBuilder,
    QuantModels,
    Workflows,
}

impl Group {
    pub const ALL: [Group; 10] = [
        Group::AiRuntimeGovernance,
        Group::AgentsMcp,
        Group::CorePlatform,
        Group::DeveloperCommercial,
        Group::FinancialActions,
        Group::FinancialDataPlanning,
        Group::KnowledgeIntelligence,
        Group::LqmBuilder,
        Group::QuantModels,
        Group::Workflows,
    ];

    /// What the group's operations are for, one sentence (the OpenAPI tag's description).
    pub fn description(self) -> &'static str {
        match self {
            Group::AiRuntimeGovernance => "AI credits: the workspace's balance for metered AI and model work.",
            Group::AgentsMcp => {
                "Agents: the MCP and A2A gateways, signed execution clients, Agent Spaces and their evidence."
            }
            Group::CorePlatform => {
                "The workspace, infrastructure reads, the audit head and the operation catalogue with its change ledger."
            }
            Group::DeveloperCommercial => "The marketplace's listings and benchmark comparisons of portfolios.",
            Group::FinancialActions => {
                "Financial Actions: proposals, pre-trade checks, delegations, execution and reconciliation; people approve."
            }
            Group::FinancialDataPlanning => "Market, economic and finance-core data, imports and planning forecasts.",
            Group::KnowledgeIntelligence => {
                "Client intelligence: calls, recordings, consent and transcripts, and the intelligence summary."
            }
            Group::LqmBuilder => {
                "LQM Builder: registration, dataset contracts, retraining review, publication and promotion of models."
            }
            Group::QuantModels => "Quantitative computation, models, research and investment analytics.",
            Group::Workflows => "Workflow studio, durable runs with human review, and the workflow gateway.",
        }
    }

    /// The group's name as the seed writes it (also the OpenAPI tag).
    pub fn name(self) -> &'static str {
        match self {
            Group::AiRuntimeGovernance => "AI Runtime & Governance",
            Group::AgentsMcp => "Agents & MCP",
            Group::CorePlatform => "Core Platform",
            Group::DeveloperCommercial => "Developer & Commercial",
            Group::FinancialActions => "Financial Actions",
            Group::FinancialDataPlanning => "Financial Data & Planning",
            Group::KnowledgeIntelligence => "Knowledge Intelligence",
            Group::LqmBuilder => "LQM Builder",
            Group::QuantModels => "Quant & Models",
            Group::Workflows => "Workflows",
        }
    }
}

/// Where an operation comes from: the seed's catalogue, or added by Fiscus to fill a gap the seed leaves
/// (OAuth revocation and introspection, the audit head read).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Source {
    Seed,
    Added,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Operation {
    /// Stable operation id (also the OpenAPI `operationId` and the metrics label).
    pub id: &'static str,
    pub group: Group,
    pub method: Method,
    /// `/api/v2`, or `/api` for the MCP endpoint that lives outside the versioned prefix.
    pub base: &'static str,
    /// Path below `base`, with `{param}` placeholders as axum and OpenAPI write them.
    pub path: &'static str,
    /// The scope a bearer credential must hold. `None` only for the OAuth endpoints, which authenticate the
    /// client itself (RFC 6749 §2.3) rather than a bearer credential.
    pub scope: Option<&'static str>,
    pub source: Source,
}

impl Operation {
    /// The full path as routed, e.g. `/api/v2/workspace`.
    pub fn full_path(&self) -> String {
        format!("{}{}", self.base, self.path)
    }
}

/// The operation for a routed method and full path (as axum's `MatchedPath` reports it). Every request asks,
/// so the catalogue is indexed once by full path.
pub fn find(method: Method, full_path: &str) -> Option<&'static Operation> {
    type Index = std::collections::HashMap<String, Vec<&'static Operation>>;
    static INDEX: std::sync::LazyLock<Index> = std::sync::LazyLock::new(|| {
        let mut index = Index::new();
        for op in OPERATIONS {
            index.entry(op.full_path()).or_default().push(op);
        }
        index
    });
    INDEX.get(full_path)?.iter().copied().find(|op| op.method == method)
}

pub fn by_id(id: &str) -> Option<&'static Operation> {
    OPERATIONS.iter().find(|op| op.id == id)
}

/// The operation named `id`, found while compiling: `const OP: &Operation = catalogue::named("…")` does not
/// build if the catalogue has no such operation, so code that names an operation cannot name a missing one.
pub const fn named(id: &str) -> &'static Operation {
    let mut i = 0;
    while i < OPERATIONS.len() {
        if same(OPERATIONS[i].id.as_bytes(), id.as_bytes()) {
            return &OPERATIONS[i];
        }
        i += 1;
    }
    panic!("no operation of the catalogue has this id")
}

const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The number of operations that come from the seed's catalogue.
pub const SEED_OPERATION_COUNT: usize = 114;

// The 114 operations of shared/spec/operations.tsv, in its order, followed by the operations Fiscus adds.
// Generated once from the TSV; edit by hand from now on (a test checks the count and the scopes).
pub const OPERATIONS: &[Operation] = &[
    Operation {
        id: "post_agent_execution_a2a",
        group: Group::AgentsMcp,
        method: Method::Post,
        base: "/api/v2",
        path: "/agent-execution/a2a",
        scope: Some("agent:execution:invoke"),
        source: Source::Seed,
    },
    Operation {
        id: "get_agent_execution_actions_uid",
        group: Group::AgentsMcp,
        method: Method::Get,
        base: "/api/v2",
        path: "/agent-execution/actions/{uid}",
        scope: Some("agent:execution:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_agent_execution_actions_uid_assurance",
        group: Group::AgentsMcp,
        method: Method::Get,
        base: "/api/v2",
        path: "/agent-execution/actions/{uid}/assurance",
        scope: Some("agent:execution:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_agent_execution_actions_uid_execute",
        group: Group::AgentsMcp,
        method: Method::Post,
        base: "/api/v2",
        path: "/agent-execution/actions/{uid}/execute",
        scope: Some("agent:execution:execute"),
        source: Source::Seed,
    },
    Operation {
        id: "get_agent_execution_actions_uid_reconciliation",
        group: Group::AgentsMcp,
        method: Method::Get,
        base: "/api/v2",
        path: "/agent-execution/actions/{uid}/reconciliation",
        scope: Some("agent:execution:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_agent_execution_actions_uid_submit",
        group: Group::AgentsMcp,
        method: Method::Post,
        base: "/api/v2",
        path: "/agent-execution/actions/{uid}/submit",
        scope: Some("agent:execution:submit"),
        source: Source::Seed,
    },
    Operation {
        id: "get_agent_execution_capabilities",
        group: Group::AgentsMcp,
        method: Method::Get,
        base: "/api/v2",
        path: "/agent-execution/capabilities",
        scope: Some("agent:execution:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_agent_execution_mcp",
        group: Group::AgentsMcp,
        method: Method::Post,
        base: "/api/v2",
        path: "/agent-execution/mcp",
        scope: Some("agent:execution:invoke"),
        source: Source::Seed,
    },
    Operation {
        id: "post_agent_execution_proposals",
        group: Group::AgentsMcp,
        method: Method::Post,
        base: "/api/v2",
        path: "/agent-execution/proposals",
        scope: Some("agent:execution:propose"),
        source: Source::Seed,
    },
    Operation {
        id: "get_agent_execution_requests_uid",
        group: Group::AgentsMcp,
        method: Method::Get,
        base: "/api/v2",
        path: "/agent-execution/requests/{uid}",
        scope: Some("agent:execution:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_agent_execution_service_level",
        group: Group::AgentsMcp,
        method: Method::Get,
        base: "/api/v2",
        path: "/agent-execution/service-level",
        scope: Some("agent:execution:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_agent_execution_usage",
        group: Group::AgentsMcp,
        method: Method::Get,
        base: "/api/v2",
        path: "/agent-execution/usage",
        scope: Some("agent:execution:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_agent_execution_webhooks",
        group: Group::AgentsMcp,
        method: Method::Get,
        base: "/api/v2",
        path: "/agent-execution/webhooks",
        scope: Some("agent:execution:webhooks"),
        source: Source::Seed,
    },
    Operation {
        id: "post_agent_execution_webhooks",
        group: Group::AgentsMcp,
        method: Method::Post,
        base: "/api/v2",
        path: "/agent-execution/webhooks",
        scope: Some("agent:execution:webhooks"),
        source: Source::Seed,
    },
    Operation {
        id: "delete_agent_execution_webhooks_uid",
        group: Group::AgentsMcp,
        method: Method::Delete,
        base: "/api/v2",
        path: "/agent-execution/webhooks/{uid}",
        scope: Some("agent:execution:webhooks"),
        source: Source::Seed,
    },
    Operation {
        id: "post_agent_execution_workflows_a2a",
        group: Group::AgentsMcp,
        method: Method::Post,
        base: "/api/v2",
        path: "/agent-execution/workflows/a2a",
        scope: Some("agent:execution:invoke"),
        source: Source::Seed,
    },
    Operation {
        id: "get_agents_executions_uid",
        group: Group::AgentsMcp,
        method: Method::Get,
        base: "/api/v2",
        path: "/agents/executions/{uid}",
        scope: Some("agents:spaces:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_agents_invocations",
        group: Group::AgentsMcp,
        method: Method::Get,
        base: "/api/v2",
        path: "/agents/invocations",
        scope: Some("agents:mcp:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_agents_runs_runuid",
        group: Group::AgentsMcp,
        method: Method::Get,
        base: "/api/v2",
        path: "/agents/runs/{runUid}",
        scope: Some("agents:spaces:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_agents_spaces",
        group: Group::AgentsMcp,
        method: Method::Get,
        base: "/api/v2",
        path: "/agents/spaces",
        scope: Some("agents:spaces:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_agents_spaces_uid",
        group: Group::AgentsMcp,
        method: Method::Get,
        base: "/api/v2",
        path: "/agents/spaces/{uid}",
        scope: Some("agents:spaces:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_agents_spaces_uid_runs",
        group: Group::AgentsMcp,
        method: Method::Post,
        base: "/api/v2",
        path: "/agents/spaces/{uid}/runs",
        scope: Some("agents:spaces:run"),
        source: Source::Seed,
    },
    Operation {
        id: "get_agents_tools",
        group: Group::AgentsMcp,
        method: Method::Get,
        base: "/api/v2",
        path: "/agents/tools",
        scope: Some("agents:mcp:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_ai_credits_balance",
        group: Group::AiRuntimeGovernance,
        method: Method::Get,
        base: "/api/v2",
        path: "/ai-credits/balance",
        scope: Some("ai:credits:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_actions_investment_execution_uid_checks",
        group: Group::FinancialActions,
        method: Method::Post,
        base: "/api/v2",
        path: "/actions/investment-execution/{uid}/checks",
        scope: Some("investment:execute"),
        source: Source::Seed,
    },
    Operation {
        id: "post_actions_agentic_identities_uid_delegations",
        group: Group::FinancialActions,
        method: Method::Post,
        base: "/api/v2",
        path: "/actions/agentic/identities/{uid}/delegations",
        scope: Some("actions:create"),
        source: Source::Seed,
    },
    Operation {
        id: "post_actions_autonomy_assessment_evidence",
        group: Group::FinancialActions,
        method: Method::Post,
        base: "/api/v2",
        path: "/actions/autonomy/assessment-evidence",
        scope: Some("actions:create"),
        source: Source::Seed,
    },
    Operation {
        id: "post_investment_themes_universes_universe_model_portfolio",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/investment/themes/universes/{universe}/model-portfolio",
        scope: Some("investment:run"),
        source: Source::Seed,
    },
    Operation {
        id: "post_investment_portfolios_portfolio_collateral_inventory",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/investment/portfolios/{portfolio}/collateral-inventory",
        scope: Some("investment:run"),
        source: Source::Seed,
    },
    Operation {
        id: "post_investment_governed_ai_operations_uid_rebalance",
        group: Group::FinancialActions,
        method: Method::Post,
        base: "/api/v2",
        path: "/investment/governed-ai-operations/{uid}/rebalance",
        scope: Some("investment:run"),
        source: Source::Seed,
    },
    Operation {
        id: "get_investment_generative_markets_runs",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/investment/generative-markets/runs",
        scope: Some("investment:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_investment_risk_compliance_runs_uid",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/investment/risk-compliance/runs/{uid}",
        scope: Some("investment:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_lqm_models",
        group: Group::LqmBuilder,
        method: Method::Post,
        base: "/api/v2",
        path: "/lqm/models",
        scope: Some("lqm:build:write"),
        source: Source::Seed,
    },
    Operation {
        id: "post_lqm_retraining_requests_requestuid_decision",
        group: Group::LqmBuilder,
        method: Method::Post,
        base: "/api/v2",
        path: "/lqm/retraining-requests/{requestUid}/decision",
        scope: Some("lqm:build:write"),
        source: Source::Seed,
    },
    Operation {
        id: "post_lqm_datasets_dataset_contracts",
        group: Group::LqmBuilder,
        method: Method::Post,
        base: "/api/v2",
        path: "/lqm/datasets/{dataset}/contracts",
        scope: Some("lqm:build:write"),
        source: Source::Seed,
    },
    Operation {
        id: "get_lqm_publications_publicationuid",
        group: Group::LqmBuilder,
        method: Method::Get,
        base: "/api/v2",
        path: "/lqm/publications/{publicationUid}",
        scope: Some("lqm:build:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_lqm_models_uid_developer_manifest",
        group: Group::LqmBuilder,
        method: Method::Get,
        base: "/api/v2",
        path: "/lqm/models/{uid}/developer-manifest",
        scope: Some("lqm:build:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_lqm_models_uid_promotions",
        group: Group::LqmBuilder,
        method: Method::Get,
        base: "/api/v2",
        path: "/lqm/models/{uid}/promotions",
        scope: Some("lqm:build:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_workflow_studio_versions_uid_validate",
        group: Group::Workflows,
        method: Method::Post,
        base: "/api/v2",
        path: "/workflow-studio/versions/{uid}/validate",
        scope: Some("workflow:manage"),
        source: Source::Seed,
    },
    Operation {
        id: "post_client_intelligence_calls_uid_transcribe_recording",
        group: Group::KnowledgeIntelligence,
        method: Method::Post,
        base: "/api/v2",
        path: "/client-intelligence/calls/{uid}/transcribe-recording",
        scope: Some("client:intelligence:run"),
        source: Source::Seed,
    },
    Operation {
        id: "get_finance_core_entities",
        group: Group::FinancialDataPlanning,
        method: Method::Get,
        base: "/api/v2",
        path: "/finance-core/entities",
        scope: Some("finance-core:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_finance_core_journals",
        group: Group::FinancialDataPlanning,
        method: Method::Get,
        base: "/api/v2",
        path: "/finance-core/journals",
        scope: Some("finance-core:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_workflows_proof_of_value",
        group: Group::Workflows,
        method: Method::Post,
        base: "/api/v2",
        path: "/workflows/proof-of-value",
        scope: Some("workflow:manage"),
        source: Source::Seed,
    },
    Operation {
        id: "get_workflows_proof_of_value",
        group: Group::Workflows,
        method: Method::Get,
        base: "/api/v2",
        path: "/workflows/proof-of-value",
        scope: Some("workflow:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_workflows_library_key_install",
        group: Group::Workflows,
        method: Method::Post,
        base: "/api/v2",
        path: "/workflows/library/{key}/install",
        scope: Some("workflow:manage"),
        source: Source::Seed,
    },
    Operation {
        id: "get_workflows_library",
        group: Group::Workflows,
        method: Method::Get,
        base: "/api/v2",
        path: "/workflows/library",
        scope: Some("workflow:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_workflows_runs",
        group: Group::Workflows,
        method: Method::Get,
        base: "/api/v2",
        path: "/workflows/runs",
        scope: Some("workflow:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_investment_portfolios_portfolio_tax_harvest",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/investment/portfolios/{portfolio}/tax-harvest",
        scope: Some("investment:run"),
        source: Source::Seed,
    },
    Operation {
        id: "get_investment_portfolios_portfolio_tax_lots",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/investment/portfolios/{portfolio}/tax-lots",
        scope: Some("investment:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_investment_portfolios_portfolio_scenarios",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/investment/portfolios/{portfolio}/scenarios",
        scope: Some("investment:run"),
        source: Source::Seed,
    },
    Operation {
        id: "post_investment_portfolios_portfolio_construct",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/investment/portfolios/{portfolio}/construct",
        scope: Some("investment:run"),
        source: Source::Seed,
    },
    Operation {
        id: "get_investment_portfolios",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/investment/portfolios",
        scope: Some("investment:read"),
        source: Source::Added,
    },
    Operation {
        id: "post_investment_themes_universes",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/investment/themes/universes",
        scope: Some("investment:run"),
        source: Source::Added,
    },
    Operation {
        id: "post_investment_themes_universes_universe_handoff",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/investment/themes/universes/{universe}/handoff",
        scope: Some("investment:run"),
        source: Source::Added,
    },
    Operation {
        id: "get_investment_themes_universes",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/investment/themes/universes",
        scope: Some("investment:read"),
        source: Source::Added,
    },
    Operation {
        id: "get_investment_themes_universes_universe",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/investment/themes/universes/{universe}",
        scope: Some("investment:read"),
        source: Source::Added,
    },
    Operation {
        id: "get_investment_model_portfolios",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/investment/model-portfolios",
        scope: Some("investment:read"),
        source: Source::Added,
    },
    Operation {
        id: "get_investment_model_portfolios_uid",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/investment/model-portfolios/{uid}",
        scope: Some("investment:read"),
        source: Source::Added,
    },
    Operation {
        id: "post_investment_governed_ai_operations",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/investment/governed-ai-operations",
        scope: Some("investment:run"),
        source: Source::Added,
    },
    Operation {
        id: "get_investment_governed_ai_operations_uid",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/investment/governed-ai-operations/{uid}",
        scope: Some("investment:read"),
        source: Source::Added,
    },
    Operation {
        id: "post_investment_risk_compliance_runs",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/investment/risk-compliance/runs",
        scope: Some("investment:run"),
        source: Source::Added,
    },
    Operation {
        id: "post_investment_generative_markets_runs",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/investment/generative-markets/runs",
        scope: Some("investment:run"),
        source: Source::Added,
    },
    Operation {
        id: "post_investment_reports",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/investment/reports",
        scope: Some("investment:run"),
        source: Source::Added,
    },
    Operation {
        id: "post_investment_rebalance_proposals_uid_actions",
        group: Group::FinancialActions,
        method: Method::Post,
        base: "/api/v2",
        path: "/investment/rebalance-proposals/{uid}/actions",
        scope: Some("investment:execute"),
        source: Source::Added,
    },
    Operation {
        id: "get_investment_companies_symbol",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/investment/companies/{symbol}",
        scope: Some("investment:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_investment_reports",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/investment/reports",
        scope: Some("investment:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_investment_risk",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/investment/risk",
        scope: Some("investment:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_qlms_uid_versions",
        group: Group::LqmBuilder,
        method: Method::Get,
        base: "/api/v2",
        path: "/qlms/{uid}/versions",
        scope: Some("qlm:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_qlms_uid_evaluate",
        group: Group::LqmBuilder,
        method: Method::Post,
        base: "/api/v2",
        path: "/qlms/{uid}/evaluate",
        scope: Some("qlm:evaluate"),
        source: Source::Seed,
    },
    Operation {
        id: "post_qlms_uid_invoke",
        group: Group::LqmBuilder,
        method: Method::Post,
        base: "/api/v2",
        path: "/qlms/{uid}/invoke",
        scope: Some("qlm:invoke"),
        source: Source::Seed,
    },
    Operation {
        id: "get_qlms_uid",
        group: Group::LqmBuilder,
        method: Method::Get,
        base: "/api/v2",
        path: "/qlms/{uid}",
        scope: Some("qlm:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_qlms",
        group: Group::LqmBuilder,
        method: Method::Get,
        base: "/api/v2",
        path: "/qlms",
        scope: Some("qlm:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_infrastructure_lineage_exports_uid",
        group: Group::CorePlatform,
        method: Method::Get,
        base: "/api/v2",
        path: "/infrastructure/lineage-exports/{uid}",
        scope: Some("infrastructure:lineage"),
        source: Source::Seed,
    },
    Operation {
        id: "post_infrastructure_lineage_exports",
        group: Group::CorePlatform,
        method: Method::Post,
        base: "/api/v2",
        path: "/infrastructure/lineage-exports",
        scope: Some("infrastructure:lineage"),
        source: Source::Seed,
    },
    Operation {
        id: "get_infrastructure_data_entitlements",
        group: Group::CorePlatform,
        method: Method::Get,
        base: "/api/v2",
        path: "/infrastructure/data-entitlements",
        scope: Some("infrastructure:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_infrastructure_usage",
        group: Group::CorePlatform,
        method: Method::Get,
        base: "/api/v2",
        path: "/infrastructure/usage",
        scope: Some("infrastructure:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_infrastructure_regions",
        group: Group::CorePlatform,
        method: Method::Get,
        base: "/api/v2",
        path: "/infrastructure/regions",
        scope: Some("infrastructure:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_infrastructure_service_classes",
        group: Group::CorePlatform,
        method: Method::Get,
        base: "/api/v2",
        path: "/infrastructure/service-classes",
        scope: Some("infrastructure:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_infrastructure_posture",
        group: Group::CorePlatform,
        method: Method::Get,
        base: "/api/v2",
        path: "/infrastructure/posture",
        scope: Some("infrastructure:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_root_mcp",
        group: Group::AgentsMcp,
        method: Method::Post,
        base: "/api",
        path: "/mcp",
        scope: Some("agents:mcp:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_quant_compute_jobs_uid_cancel",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/quant/compute/jobs/{uid}/cancel",
        scope: Some("quant:compute:run"),
        source: Source::Seed,
    },
    Operation {
        id: "post_quant_compute_optimizations",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/quant/compute/optimizations",
        scope: Some("quant:compute:run"),
        source: Source::Seed,
    },
    Operation {
        id: "post_quant_compute_simulations",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/quant/compute/simulations",
        scope: Some("quant:compute:run"),
        source: Source::Seed,
    },
    Operation {
        id: "post_quant_compute_backtests",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/quant/compute/backtests",
        scope: Some("quant:compute:run"),
        source: Source::Seed,
    },
    Operation {
        id: "get_quant_compute_jobs_uid",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/quant/compute/jobs/{uid}",
        scope: Some("quant:compute:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_quant_compute_jobs",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/quant/compute/jobs",
        scope: Some("quant:compute:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_marketplace_listings",
        group: Group::DeveloperCommercial,
        method: Method::Get,
        base: "/api/v2",
        path: "/marketplace/listings",
        scope: Some("marketplace:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_generative_runs_uid",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/generative/runs/{uid}",
        scope: Some("generative:models:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_generative_runs",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/generative/runs",
        scope: Some("generative:models:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_generative_models",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/generative/models",
        scope: Some("generative:models:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_generative_paths",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/generative/paths",
        scope: Some("generative:inference"),
        source: Source::Seed,
    },
    Operation {
        id: "post_generative_scenarios",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/generative/scenarios",
        scope: Some("generative:inference"),
        source: Source::Seed,
    },
    Operation {
        id: "post_quant_model_tournaments",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/quant/model-tournaments",
        scope: Some("quant:models:run"),
        source: Source::Seed,
    },
    Operation {
        id: "get_quant_model_tournaments_uid",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/quant/model-tournaments/{uid}",
        scope: Some("quant:models:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_quant_model_tournaments",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/quant/model-tournaments",
        scope: Some("quant:models:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_quant_statistical_models",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/quant/statistical-models",
        scope: Some("quant:models:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_quant_model_runs",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/quant/model-runs",
        scope: Some("quant:models:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_quant_models_key_run",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/quant/models/{key}/run",
        scope: Some("quant:models:run"),
        source: Source::Seed,
    },
    Operation {
        id: "get_quant_models_key",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/quant/models/{key}",
        scope: Some("quant:models:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_quant_models",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/quant/models",
        scope: Some("quant:models:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_quant_research_runs",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/quant/research/runs",
        scope: Some("quant:research:run"),
        source: Source::Seed,
    },
    Operation {
        id: "get_quant_research_snapshots_uid",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/quant/research/snapshots/{uid}",
        scope: Some("quant:research:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_quant_research_snapshots",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/quant/research/snapshots",
        scope: Some("quant:research:run"),
        source: Source::Seed,
    },
    Operation {
        id: "get_quant_research_snapshots",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/quant/research/snapshots",
        scope: Some("quant:research:read"),
        source: Source::Added,
    },
    Operation {
        id: "get_quant_projects",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/quant/projects",
        scope: Some("quant:research:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_quant_features_key_values",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/quant/features/{key}/values",
        scope: Some("quant:features:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_quant_features_key",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/quant/features/{key}",
        scope: Some("quant:features:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_quant_features",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/quant/features",
        scope: Some("quant:features:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_data_economics_series_key_observations",
        group: Group::FinancialDataPlanning,
        method: Method::Get,
        base: "/api/v2",
        path: "/data/economics/series/{key}/observations",
        scope: Some("data:economics:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_data_economics_series_key",
        group: Group::FinancialDataPlanning,
        method: Method::Get,
        base: "/api/v2",
        path: "/data/economics/series/{key}",
        scope: Some("data:economics:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_data_economics_series",
        group: Group::FinancialDataPlanning,
        method: Method::Get,
        base: "/api/v2",
        path: "/data/economics/series",
        scope: Some("data:economics:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_data_instruments_uid_corporate_actions",
        group: Group::FinancialDataPlanning,
        method: Method::Get,
        base: "/api/v2",
        path: "/data/instruments/{uid}/corporate-actions",
        scope: Some("data:market:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_data_instruments_uid_fundamentals",
        group: Group::FinancialDataPlanning,
        method: Method::Get,
        base: "/api/v2",
        path: "/data/instruments/{uid}/fundamentals",
        scope: Some("data:fundamentals:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_data_instruments_uid_prices",
        group: Group::FinancialDataPlanning,
        method: Method::Get,
        base: "/api/v2",
        path: "/data/instruments/{uid}/prices",
        scope: Some("data:market:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_data_instruments_uid",
        group: Group::FinancialDataPlanning,
        method: Method::Get,
        base: "/api/v2",
        path: "/data/instruments/{uid}",
        scope: Some("data:reference:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_data_instruments",
        group: Group::FinancialDataPlanning,
        method: Method::Get,
        base: "/api/v2",
        path: "/data/instruments",
        scope: Some("data:reference:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_data_datasets",
        group: Group::FinancialDataPlanning,
        method: Method::Get,
        base: "/api/v2",
        path: "/data/datasets",
        scope: Some("data:reference:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_ml_scenarios",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/ml/scenarios",
        scope: Some("ml:inference"),
        source: Source::Seed,
    },
    Operation {
        id: "post_ml_anomaly",
        group: Group::QuantModels,
        method: Method::Post,
        base: "/api/v2",
        path: "/ml/anomaly",
        scope: Some("ml:inference"),
        source: Source::Seed,
    },
    Operation {
        id: "get_ml_models",
        group: Group::QuantModels,
        method: Method::Get,
        base: "/api/v2",
        path: "/ml/models",
        scope: Some("ml:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_intelligence_summary",
        group: Group::KnowledgeIntelligence,
        method: Method::Get,
        base: "/api/v2",
        path: "/intelligence/summary",
        scope: Some("intelligence:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_benchmarking_comparisons",
        group: Group::DeveloperCommercial,
        method: Method::Get,
        base: "/api/v2",
        path: "/benchmarking/comparisons",
        scope: Some("benchmark:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_planning_forecasts",
        group: Group::FinancialDataPlanning,
        method: Method::Post,
        base: "/api/v2",
        path: "/planning/forecasts",
        scope: Some("planning:forecast:create"),
        source: Source::Seed,
    },
    Operation {
        id: "get_planning_forecasts",
        group: Group::FinancialDataPlanning,
        method: Method::Get,
        base: "/api/v2",
        path: "/planning/forecasts",
        scope: Some("planning:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_financial_transactions",
        group: Group::FinancialDataPlanning,
        method: Method::Get,
        base: "/api/v2",
        path: "/financial/transactions",
        scope: Some("financial:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_financial_snapshots",
        group: Group::FinancialDataPlanning,
        method: Method::Get,
        base: "/api/v2",
        path: "/financial/snapshots",
        scope: Some("financial:read"),
        source: Source::Seed,
    },
    Operation {
        id: "get_workspace",
        group: Group::CorePlatform,
        method: Method::Get,
        base: "/api/v2",
        path: "/workspace",
        scope: Some("workspace:read"),
        source: Source::Seed,
    },
    Operation {
        id: "post_oauth_token",
        group: Group::CorePlatform,
        method: Method::Post,
        base: "/api/v2",
        path: "/oauth/token",
        scope: None,
        source: Source::Seed,
    },
    Operation {
        id: "post_oauth_revoke",
        group: Group::CorePlatform,
        method: Method::Post,
        base: "/api/v2",
        path: "/oauth/revoke",
        scope: None,
        source: Source::Added,
    },
    Operation {
        id: "post_oauth_introspect",
        group: Group::CorePlatform,
        method: Method::Post,
        base: "/api/v2",
        path: "/oauth/introspect",
        scope: None,
        source: Source::Added,
    },
    Operation {
        id: "get_catalogue",
        group: Group::CorePlatform,
        method: Method::Get,
        base: "/api/v2",
        path: "/catalogue",
        scope: Some("infrastructure:read"),
        source: Source::Added,
    },
    Operation {
        id: "get_catalogue_ledger",
        group: Group::CorePlatform,
        method: Method::Get,
        base: "/api/v2",
        path: "/catalogue/ledger",
        scope: Some("infrastructure:read"),
        source: Source::Added,
    },
    Operation {
        id: "get_actions_autonomy_assessment_evidence",
        group: Group::FinancialActions,
        method: Method::Get,
        base: "/api/v2",
        path: "/actions/autonomy/assessment-evidence",
        scope: Some("actions:read"),
        source: Source::Added,
    },
    Operation {
        id: "post_actions",
        group: Group::FinancialActions,
        method: Method::Post,
        base: "/api/v2",
        path: "/actions",
        scope: Some("actions:create"),
        source: Source::Added,
    },
    Operation {
        id: "get_actions",
        group: Group::FinancialActions,
        method: Method::Get,
        base: "/api/v2",
        path: "/actions",
        scope: Some("actions:read"),
        source: Source::Added,
    },
    Operation {
        id: "get_actions_uid",
        group: Group::FinancialActions,
        method: Method::Get,
        base: "/api/v2",
        path: "/actions/{uid}",
        scope: Some("actions:read"),
        source: Source::Added,
    },
    Operation {
        id: "get_actions_uid_checks",
        group: Group::FinancialActions,
        method: Method::Get,
        base: "/api/v2",
        path: "/actions/{uid}/checks",
        scope: Some("actions:read"),
        source: Source::Added,
    },
    Operation {
        id: "post_actions_uid_execute",
        group: Group::FinancialActions,
        method: Method::Post,
        base: "/api/v2",
        path: "/actions/{uid}/execute",
        scope: Some("actions:execute"),
        source: Source::Added,
    },
    Operation {
        id: "post_actions_agentic_identities",
        group: Group::FinancialActions,
        method: Method::Post,
        base: "/api/v2",
        path: "/actions/agentic/identities",
        scope: Some("actions:create"),
        source: Source::Added,
    },
    Operation {
        id: "get_actions_agentic_identities",
        group: Group::FinancialActions,
        method: Method::Get,
        base: "/api/v2",
        path: "/actions/agentic/identities",
        scope: Some("actions:read"),
        source: Source::Added,
    },
    Operation {
        id: "get_actions_agentic_identities_uid",
        group: Group::FinancialActions,
        method: Method::Get,
        base: "/api/v2",
        path: "/actions/agentic/identities/{uid}",
        scope: Some("actions:read"),
        source: Source::Added,
    },
    Operation {
        id: "get_actions_agentic_delegations_uid",
        group: Group::FinancialActions,
        method: Method::Get,
        base: "/api/v2",
        path: "/actions/agentic/delegations/{uid}",
        scope: Some("actions:read"),
        source: Source::Added,
    },
    Operation {
        id: "post_data_imports",
        group: Group::FinancialDataPlanning,
        method: Method::Post,
        base: "/api/v2",
        path: "/data/imports",
        scope: Some("finance-core:intake:write"),
        source: Source::Added,
    },
    Operation {
        id: "get_trust_audit_head",
        group: Group::CorePlatform,
        method: Method::Get,
        base: "/api/v2",
        path: "/trust/audit-head",
        scope: Some("trust:read"),
        source: Source::Added,
    },
    Operation {
        id: "get_lqm_models",
        group: Group::LqmBuilder,
        method: Method::Get,
        base: "/api/v2",
        path: "/lqm/models",
        scope: Some("lqm:build:read"),
        source: Source::Added,
    },
    Operation {
        id: "get_lqm_models_uid",
        group: Group::LqmBuilder,
        method: Method::Get,
        base: "/api/v2",
        path: "/lqm/models/{uid}",
        scope: Some("lqm:build:read"),
        source: Source::Added,
    },
    Operation {
        id: "get_lqm_contracts_uid",
        group: Group::LqmBuilder,
        method: Method::Get,
        base: "/api/v2",
        path: "/lqm/contracts/{uid}",
        scope: Some("lqm:build:read"),
        source: Source::Added,
    },
    Operation {
        id: "post_lqm_models_uid_retraining_requests",
        group: Group::LqmBuilder,
        method: Method::Post,
        base: "/api/v2",
        path: "/lqm/models/{uid}/retraining-requests",
        scope: Some("lqm:build:write"),
        source: Source::Added,
    },
    Operation {
        id: "get_lqm_retraining_requests_requestuid",
        group: Group::LqmBuilder,
        method: Method::Get,
        base: "/api/v2",
        path: "/lqm/retraining-requests/{requestUid}",
        scope: Some("lqm:build:read"),
        source: Source::Added,
    },
    Operation {
        id: "post_lqm_retraining_requests_requestuid_training",
        group: Group::LqmBuilder,
        method: Method::Post,
        base: "/api/v2",
        path: "/lqm/retraining-requests/{requestUid}/training",
        scope: Some("lqm:build:run"),
        source: Source::Added,
    },
    Operation {
        id: "get_lqm_checkpoints_uid",
        group: Group::LqmBuilder,
        method: Method::Get,
        base: "/api/v2",
        path: "/lqm/checkpoints/{uid}",
        scope: Some("lqm:build:read"),
        source: Source::Added,
    },
    Operation {
        id: "post_lqm_checkpoints_uid_evaluation",
        group: Group::LqmBuilder,
        method: Method::Post,
        base: "/api/v2",
        path: "/lqm/checkpoints/{uid}/evaluation",
        scope: Some("lqm:build:run"),
        source: Source::Added,
    },
    Operation {
        id: "post_lqm_checkpoints_uid_evidence_packet",
        group: Group::LqmBuilder,
        method: Method::Post,
        base: "/api/v2",
        path: "/lqm/checkpoints/{uid}/evidence-packet",
        scope: Some("lqm:build:write"),
        source: Source::Added,
    },
    Operation {
        id: "post_lqm_checkpoints_uid_publication",
        group: Group::LqmBuilder,
        method: Method::Post,
        base: "/api/v2",
        path: "/lqm/checkpoints/{uid}/publication",
        scope: Some("lqm:publish:write"),
        source: Source::Added,
    },
    Operation {
        id: "post_lqm_checkpoints_uid_promotion_requests",
        group: Group::LqmBuilder,
        method: Method::Post,
        base: "/api/v2",
        path: "/lqm/checkpoints/{uid}/promotion-requests",
        scope: Some("lqm:promote:write"),
        source: Source::Added,
    },
    Operation {
        id: "post_qlms",
        group: Group::LqmBuilder,
        method: Method::Post,
        base: "/api/v2",
        path: "/qlms",
        scope: Some("lqm:build:write"),
        source: Source::Added,
    },
    Operation {
        id: "post_workflow_studio_versions",
        group: Group::Workflows,
        method: Method::Post,
        base: "/api/v2",
        path: "/workflow-studio/versions",
        scope: Some("workflow:manage"),
        source: Source::Added,
    },
    Operation {
        id: "get_workflow_studio_versions_uid",
        group: Group::Workflows,
        method: Method::Get,
        base: "/api/v2",
        path: "/workflow-studio/versions/{uid}",
        scope: Some("workflow:read"),
        source: Source::Added,
    },
    Operation {
        id: "get_workflow_studio_campaigns_uid",
        group: Group::Workflows,
        method: Method::Get,
        base: "/api/v2",
        path: "/workflow-studio/campaigns/{uid}",
        scope: Some("workflow:read"),
        source: Source::Added,
    },
    Operation {
        id: "post_workflows_runs",
        group: Group::Workflows,
        method: Method::Post,
        base: "/api/v2",
        path: "/workflows/runs",
        scope: Some("workflow:manage"),
        source: Source::Added,
    },
    Operation {
        id: "get_workflows_runs_uid",
        group: Group::Workflows,
        method: Method::Get,
        base: "/api/v2",
        path: "/workflows/runs/{uid}",
        scope: Some("workflow:read"),
        source: Source::Added,
    },
    Operation {
        id: "post_workflows_runs_uid_cancel",
        group: Group::Workflows,
        method: Method::Post,
        base: "/api/v2",
        path: "/workflows/runs/{uid}/cancel",
        scope: Some("workflow:manage"),
        source: Source::Added,
    },
    Operation {
        id: "post_client_intelligence_calls",
        group: Group::KnowledgeIntelligence,
        method: Method::Post,
        base: "/api/v2",
        path: "/client-intelligence/calls",
        scope: Some("client:intelligence:write"),
        source: Source::Added,
    },
    Operation {
        id: "get_client_intelligence_calls_uid",
        group: Group::KnowledgeIntelligence,
        method: Method::Get,
        base: "/api/v2",
        path: "/client-intelligence/calls/{uid}",
        scope: Some("client:intelligence:read"),
        source: Source::Added,
    },
    Operation {
        id: "post_client_intelligence_calls_uid_recordings",
        group: Group::KnowledgeIntelligence,
        method: Method::Post,
        base: "/api/v2",
        path: "/client-intelligence/calls/{uid}/recordings",
        scope: Some("client:intelligence:write"),
        source: Source::Added,
    },
    Operation {
        id: "post_client_intelligence_calls_uid_consent",
        group: Group::KnowledgeIntelligence,
        method: Method::Post,
        base: "/api/v2",
        path: "/client-intelligence/calls/{uid}/consent",
        scope: Some("client:intelligence:write"),
        source: Source::Added,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scopes;
    use std::collections::HashSet;

    #[test]
    fn the_catalogue_holds_the_114_seed_operations_and_marks_additions() {
        let seed = OPERATIONS.iter().filter(|op| op.source == Source::Seed).count();
        assert_eq!(seed, SEED_OPERATION_COUNT);
    }

    #[test]
    fn every_scope_in_the_catalogue_is_registered() {
        for op in OPERATIONS {
            if let Some(scope) = op.scope {
                assert!(scopes::is_registered(scope), "{} uses unregistered {scope}", op.id);
            }
        }
    }

    #[test]
    fn operation_ids_and_routes_are_unique() {
        let mut ids = HashSet::new();
        let mut routes = HashSet::new();
        for op in OPERATIONS {
            assert!(ids.insert(op.id), "duplicate id {}", op.id);
            assert!(routes.insert((op.method, op.full_path())), "duplicate route {}", op.id);
        }
    }

    #[test]
    fn only_oauth_endpoints_go_without_a_scope() {
        for op in OPERATIONS.iter().filter(|op| op.scope.is_none()) {
            assert!(op.path.starts_with("/oauth/"), "{} has no scope", op.id);
        }
    }

    #[test]
    fn lookup_matches_the_full_routed_path() {
        let op = find(Method::Get, "/api/v2/workspace").expect("catalogued");
        assert_eq!(op.scope, Some("workspace:read"));
        assert_eq!(find(Method::Post, "/api/mcp").map(|op| op.scope), Some(Some("agents:mcp:read")));
        assert!(find(Method::Delete, "/api/v2/workspace").is_none());
    }
}
