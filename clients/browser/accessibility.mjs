// Every console page in headless Chromium: a screenshot of each into OUT_DIR, and axe-core (from npm, run in
// the page) at WCAG 2.2 AA (the wcag2a, wcag2aa, wcag21a, wcag21aa and wcag22aa rules). Before signing in:
// the sign-in page, the pages named in A11Y_ANONYMOUS ("name=path,…", e.g. enrolment links), and, when
// A11Y_ENROL names a fresh enrolment link, its password form filled in to reach the second-factor page. When
// A11Y_WORKSPACE is set, the person belongs to several workspaces: the picker is checked and that one picked.
// Prints each page's violations; exits non-zero when there is any.
// Usage: node accessibility.mjs BASE_URL EMAIL PASSWORD TOTP_SECRET_BASE32 OUT_DIR PATH...
import { readFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { launch, signIn } from "./console.mjs";

const [base, email, password, secretB32, outDir, ...paths] = process.argv.slice(2);
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];
mkdirSync(outDir, { recursive: true });

// The console's CSP allows only its own script; axe is evaluated through the DevTools protocol, which the
// page's CSP does not govern, so the pages are checked exactly as they are served.
async function audit(page, name) {
  await page.screenshot({ path: `${outDir}/${name}.png`, fullPage: true });
  await page.evaluate(axeSource);
  const result = await page.evaluate(async (tags) => {
    const r = await window.axe.run(document, { runOnly: { type: "tag", values: tags } });
    return { passes: r.passes.length, violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ") + ": " + (n.failureSummary || "").split("\n").slice(0, 2).join(" ")) })) };
  }, TAGS);
  console.log(`${name}: ${result.violations.length} violation(s), ${result.passes} rule(s) passed`);
  for (const v of result.violations) console.log(`  ${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.join("\n    ")}`);
  return result.violations.length;
}

// A page's name for its screenshot: its path without the query, an object's id read as "item" (stable
// names, so each run overwrites the last one's pictures).
const slug = (path) => path.split("?")[0].replace(/^\/console\/?/, "").replace(/[a-z]{2,4}_[0-9A-Z]{26}/g, "item")
  .replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "") || "dashboard";
const browser = await launch();
let violations = 0;
try {
  const anonymous = await (await browser.newContext()).newPage();
  await anonymous.goto(`${base}/console/login`);
  violations += await audit(anonymous, "login");
  for (const pair of (process.env.A11Y_ANONYMOUS || "").split(",").filter(Boolean)) {
    const [name, path] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)];
    await anonymous.goto(`${base}${path}`);
    violations += await audit(anonymous, name);
  }
  if (process.env.A11Y_ENROL) {
    await anonymous.goto(`${base}${process.env.A11Y_ENROL}`);
    violations += await audit(anonymous, "enroll-password");
    await anonymous.fill("input[name=password]", "a long enough passphrase");
    await anonymous.fill("input[name=password_repeat]", "a long enough passphrase");
    await anonymous.click("button[type=submit]");
    await anonymous.waitForSelector("#totp-secret");
    violations += await audit(anonymous, "enroll-second-factor");
  }
  const picker = async (p) => { violations += await audit(p, "workspace-picker"); };
  const workspace = process.env.A11Y_WORKSPACE;
  const page = await signIn(browser, base, email, password, secretB32, workspace, workspace ? picker : undefined);
  for (const path of paths) {
    const response = await page.goto(`${base}${path}`);
    if (!response || response.status() !== 200) throw new Error(`${path} answered ${response && response.status()}`);
    violations += await audit(page, slug(path));
  }
  if (violations > 0) throw new Error(`${violations} accessibility violation(s)`);
  console.log("browser: ok");
} finally {
  await browser.close();
}
