//! Setup and request signing for `bench/agents.sh`.
//!
//! `agent_bench setup --data-dir D [--database-url U]` creates a workspace, an application (benchmark
//! service class) with a key, and a signed execution client granted by an admin decision taken through the
//! application layer directly (the harness stands in for the console, as the tests' helpers do; the product
//! has no such path). Prints `KEY CLIENT_ID PRIVATE_KEY_HEX` on one line.
//!
//! `agent_bench sign CLIENT_ID PRIVATE_KEY_HEX URL COUNT` prints COUNT lines `Signature-Input<TAB>Signature`
//! for `GET URL`, each with its own nonce and `created` = now, for the wrk script to send one by one.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signer as _, SigningKey};
use fiscus_domain::actor::Actor;
use fiscus_domain::credentials::Environment;
use fiscus_domain::execution_client::Grant;
use fiscus_domain::people::Role;
use fiscus_domain::scopes::ScopeSet;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::Settings;
use fiscus_kernel::governed::Caller;
use fiscus_server::admin::Admin;
use std::io::Write as _;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).filter_map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()).collect()
}

async fn setup(args: &[String]) -> anyhow::Result<()> {
    let mut settings = Settings::default();
    let mut i = 0;
    while i + 1 < args.len() {
        match args[i].as_str() {
            "--data-dir" => settings.data_dir = args[i + 1].clone().into(),
            "--database-url" => settings.database_url = Some(args[i + 1].clone()),
            other => anyhow::bail!("unknown option {other}"),
        }
        i += 2;
    }
    let state = fiscus_server::serve::open(settings).await?;
    let admin = Admin { store: &state.store, server_key: &state.server_key, actor: Actor::cli() };
    let ws = admin.create_workspace("Agent bench", false).await?;
    let scopes = ScopeSet::parse("workspace:read agent:execution:read agent:execution:invoke agents:mcp:read")
        .map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let app = admin.create_application(&ws.id, "agent-bench", Environment::Sandbox, &scopes, Some("benchmark")).await?;
    let key = admin.issue_key(&app.id, None).await?;
    let signing = SigningKey::from_bytes(&rand::random::<[u8; 32]>());
    let client = admin
        .register_execution_client(&app.id, "bench agent", &B64.encode(signing.verifying_key().to_bytes()))
        .await?;
    let tenant = Tenant { workspace_id: ws.id.clone(), environment: Environment::Sandbox };
    let grant = Grant::new(
        vec![],
        vec![],
        Environment::Sandbox,
        Environment::Sandbox,
        None,
        100_000,
        1_000_000_000,
        fiscus_domain::clock::now_micros(),
    )
    .map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let mut tx = state.store.begin().await?;
    fiscus_kernel::governed::execution_clients::decide(
        &mut tx,
        &tenant,
        &Caller::bare(Actor::operator("opr_bench")),
        Role::Admin,
        &client,
        0,
        Some(grant),
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e:?}"))?;
    tx.commit().await?;
    state.store.close().await;
    println!("{} {} {}", key.secret, client, hex(&signing.to_bytes()));
    Ok(())
}

fn sign(args: &[String]) -> anyhow::Result<()> {
    let [client, key_hex, url, count] = args else { anyhow::bail!("sign CLIENT_ID PRIVATE_KEY_HEX URL COUNT") };
    let bytes: [u8; 32] = unhex(key_hex).try_into().map_err(|_| anyhow::anyhow!("a 32-byte key in hex"))?;
    let key = SigningKey::from_bytes(&bytes);
    let created = fiscus_domain::clock::now_micros() / 1_000_000;
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    for n in 0..count.parse::<u64>()? {
        let params = format!(
            "(\"@method\" \"@target-uri\");created={created};keyid=\"{client}\";nonce=\"b{created}-{n}\";alg=\"ed25519\""
        );
        let base = format!("\"@method\": GET\n\"@target-uri\": {url}\n\"@signature-params\": {params}");
        let signature = B64.encode(key.sign(base.as_bytes()).to_bytes());
        writeln!(out, "sig1={params}\tsig1=:{signature}:")?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("setup") => setup(&args[1..]).await,
        Some("sign") => sign(&args[1..]),
        _ => anyhow::bail!("agent_bench setup … | sign …"),
    }
}
