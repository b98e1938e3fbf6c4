// Approves a payment run at the console's batch approval in headless Chromium, as a person does: from the
// pending approvals page to the batch page, the run's reference prefix typed into the filter, the summary read,
// a fresh authenticator code, one click. Prints the summary, the result and the pages the person loaded.
// Usage: node batch.mjs BASE_URL EMAIL PASSWORD TOTP_SECRET_BASE32 REFERENCE_PREFIX EXPECTED_COUNT
import { base32Decode, launch, signIn, totp } from "./console.mjs";

const [base, email, password, secretB32, prefix, expected] = process.argv.slice(2);

const browser = await launch();
try {
  const page = await signIn(browser, base, email, password, secretB32);
  let documents = 0;
  const started = Date.now();
  page.on("request", (r) => { if (r.resourceType() === "document") documents += 1; });
  await page.click("#batch-link");
  await page.waitForLoadState();
  await page.fill("input[name=reference]", prefix);
  await page.click("button:has-text('Show what matches')");
  await page.waitForSelector("#batch-summary");
  const summary = (await page.textContent("#batch-summary")).trim();
  console.log(`summary: ${summary}`);
  if (!summary.startsWith(`${expected} actions`)) throw new Error(`expected ${expected} actions, read: ${summary}`);
  console.log(`totals: ${(await page.textContent("#batch-totals")).trim()}`);
  // The sign-in spent the next step's code; a new code exists once that step has begun.
  const into = (Date.now() / 1000) % 30;
  const waited = (30 - into + 0.3) * 1000;
  await new Promise((done) => setTimeout(done, waited));
  await page.fill("input[name=code]", totp(base32Decode(secretB32), 1));
  await page.fill("input[name=reason]", "run checked against the AP ledger");
  await page.click("#approve-batch");
  await page.waitForSelector("#batch-result");
  const result = (await page.textContent("#batch-result")).replace(/\s+/g, " ").trim();
  console.log(`result: ${result}`);
  if (!result.includes(`decided ${expected} actions`)) throw new Error("the batch did not decide every action");
  console.log(`pages loaded by the person after signing in: ${documents}`);
  const took = (Date.now() - started) / 1000;
  console.log(`wall time from the pending page to the result: ${took.toFixed(1)} s (${(waited / 1000).toFixed(1)} s of it waiting for a fresh code)`);
  if (took > 60) throw new Error("the batch took longer than a minute");
  console.log("browser: ok");
} finally {
  await browser.close();
}
