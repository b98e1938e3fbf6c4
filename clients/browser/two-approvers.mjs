// A T2 payment approved by two people in headless Chromium, as they would: the first signs in by e-mail,
// picks the workspace by name (they belong to two), approves; a new version of a check arrives (posted to the
// API as the proposing application would), so the first approval goes stale and its page lists exactly what
// it no longer covers; the first approves again, then the second person signs in and approves, and the
// action is approved with 2 of 2 standing approvals. Screenshots of each step go to OUT_DIR.
// Usage: node two-approvers.mjs BASE_URL API_KEY ACTION_ID WORKSPACE_NAME OUT_DIR
//        EMAIL_1 PASSWORD_1 TOTP_SECRET_1 EMAIL_2 PASSWORD_2 TOTP_SECRET_2
import { mkdirSync } from "node:fs";
import { launch, signIn } from "./console.mjs";

const [base, apiKey, actionId, workspaceName, outDir, email1, password1, secret1, email2, password2, secret2] =
  process.argv.slice(2);
mkdirSync(outDir, { recursive: true });

async function approve(page, who) {
  await page.goto(`${base}/console`);
  await page.click(`a:has-text("${actionId}")`);
  await page.waitForSelector("#approve");
  const label = await page.textContent("#approve");
  if (!label.startsWith("Approve envelope ")) throw new Error(`the approve button does not name the envelope: ${label}`);
  await page.click("#approve");
  await page.waitForSelector(".flash");
  const quorum = await page.textContent("#quorum");
  console.log(`${who} approved; ${quorum}; flash: ${await page.textContent(".flash")}`);
  return quorum;
}

const browser = await launch();
try {
  const first = await signIn(browser, base, email1, password1, secret1, workspaceName);
  await first.screenshot({ path: `${outDir}/first-signed-in.png`, fullPage: true });
  const q1 = await approve(first, "first approver");
  if (q1 !== "1 of 2 approvals") throw new Error(`expected 1 of 2 approvals, saw ${q1}`);

  // A new version of the check arrives after the approval: the approval no longer stands.
  const check = await fetch(`${base}/api/v2/actions/investment-execution/${actionId}/checks`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ check_key: "sanctions_screening", status: "passed", source_type: "screening_report",
      source_reference: "screening://runs/2", source_hash: `sha256:${"ef".repeat(32)}` }),
  });
  if (!check.ok) throw new Error(`the new check version was refused: ${check.status} ${await check.text()}`);
  await first.reload();
  const changes = await first.textContent("ul.changes");
  console.log(`stale approval, changed since: ${changes}`);
  if (!changes.includes("sanctions_screening") || !changes.includes("version 1 passed → version 2 passed")) {
    throw new Error(`the stale approval's diff does not show the new check version: ${changes}`);
  }
  const stale = await first.textContent("#quorum");
  if (stale !== "0 of 2 approvals") throw new Error(`a stale approval still counts: ${stale}`);
  await first.screenshot({ path: `${outDir}/stale-approval.png`, fullPage: true });
  const again = await approve(first, "first approver, again");
  if (again !== "1 of 2 approvals") throw new Error(`expected 1 of 2 approvals, saw ${again}`);

  const second = await signIn(browser, base, email2, password2, secret2);
  const q2 = await approve(second, "second approver");
  const state = await second.textContent("#control-state");
  console.log(`state after both: ${state} (${q2})`);
  if (state !== "approved" || q2 !== "2 of 2 approvals") throw new Error(`expected approved with 2 of 2, saw ${state} (${q2})`);
  await second.screenshot({ path: `${outDir}/approved-by-two.png`, fullPage: true });
  console.log("browser: ok");
} finally {
  await browser.close();
}
