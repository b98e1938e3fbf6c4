// Signs an operator in at the console (password + TOTP) in headless Chromium and approves an action.
// Usage: node approve.mjs BASE_URL EMAIL PASSWORD TOTP_SECRET_BASE32 ACTION_ID
// Prints one line per step; exits non-zero on the first failure.
import { launch, signIn } from "./console.mjs";

const [base, email, password, secretB32, actionId] = process.argv.slice(2);

const browser = await launch();
try {
  const page = await signIn(browser, base, email, password, secretB32);
  await page.click(`a:has-text("${actionId}")`);
  await page.waitForSelector("#approve");
  console.log(`reviewing ${actionId}, envelope ${await page.textContent("#envelope-hash")}`);
  await page.click("#approve");
  await page.waitForFunction(() => document.querySelector("#control-state")?.textContent !== "pending_approval");
  const state = await page.textContent("#control-state");
  console.log(`state after approval: ${state}`);
  if (state !== "approved") throw new Error(`expected approved, saw ${state}`);
  console.log("browser: ok");
} finally {
  await browser.close();
}
