// Signs an operator in at the console in headless Chromium, opens the workflow reviews, and approves a run
// waiting at a review step by the button that names the step it decides.
// Usage: node review-workflow.mjs BASE_URL EMAIL PASSWORD TOTP_SECRET_BASE32 RUN_ID STEP
import { launch, signIn } from "./console.mjs";

const [base, email, password, secretB32, runId, step] = process.argv.slice(2);

const browser = await launch();
try {
  const page = await signIn(browser, base, email, password, secretB32);
  await page.click('a:has-text("Workflow reviews")');
  await page.waitForSelector(`form[action="/console/workflow-reviews/${runId}"]`);
  const form = page.locator(`form[action="/console/workflow-reviews/${runId}"]:has(button[value=approve])`);
  const decides = await form.locator("input[name=step]").getAttribute("value");
  if (decides !== step) throw new Error(`the form decides ${decides}, not ${step}`);
  const row = await page.textContent(`tr:has(code:text-is("${runId}"))`);
  if (!row.includes("value_at_risk95")) throw new Error(`the reviewer does not see the figures: ${row}`);
  console.log(`approving ${runId} at ${decides}`);
  await form.locator("input[name=note]").fill("figures reviewed in the browser");
  await form.locator("button[value=approve]").click();
  await page.waitForLoadState();
  if ((await page.locator(`form[action="/console/workflow-reviews/${runId}"]`).count()) !== 0) {
    throw new Error("the run still awaits review");
  }
  console.log("browser: ok");
} finally {
  await browser.close();
}
