// Signs an operator in at the console in headless Chromium, opens the model portfolios, and approves one by
// the button that names the content hash it covers.
// Usage: node approve-model.mjs BASE_URL EMAIL PASSWORD TOTP_SECRET_BASE32 MODEL_ID CONTENT_HASH
import { launch, signIn } from "./console.mjs";

const [base, email, password, secretB32, modelId, contentHash] = process.argv.slice(2);

const browser = await launch();
try {
  const page = await signIn(browser, base, email, password, secretB32);
  await page.click('a:has-text("Model portfolios")');
  await page.waitForSelector(`form[action="/console/model-portfolios/${modelId}"]`);
  const form = page.locator(`form[action="/console/model-portfolios/${modelId}"]:has(button[value=approve])`);
  const covered = await form.locator("input[name=content_hash]").getAttribute("value");
  if (covered !== contentHash) throw new Error(`the form covers ${covered}, not ${contentHash}`);
  console.log(`approving ${modelId}, content ${covered}`);
  await form.locator("button[value=approve]").click();
  await page.waitForLoadState();
  const row = await page.textContent(`tr:has(code:text-is("${modelId}"))`);
  if (!row.includes("approved")) throw new Error(`the model portfolio is not approved: ${row}`);
  console.log("browser: ok");
} finally {
  await browser.close();
}
