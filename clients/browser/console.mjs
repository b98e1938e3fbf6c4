// Shared by the console's browser scripts: Debian's headless Chromium (/usr/bin/chromium, or
// $FISCUS_CHROMIUM; a browser is never downloaded) and an operator's sign-in with password and TOTP.
import { chromium } from "playwright-core";
import { createHmac } from "node:crypto";

export function base32Decode(s) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0, value = 0;
  const out = [];
  for (const c of s.replace(/=+$/, "")) {
    value = (value << 5) | alphabet.indexOf(c);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

// RFC 6238 TOTP, SHA-1, 30 s, 6 digits; `offset` steps ahead (the server accepts one step of drift).
export function totp(secret, offset) {
  const counter = Math.floor(Date.now() / 1000 / 30) + offset;
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const digest = createHmac("sha1", secret).update(msg).digest();
  const o = digest[19] & 0x0f;
  const code = ((digest[o] & 0x7f) << 24 | digest[o + 1] << 16 | digest[o + 2] << 8 | digest[o + 3]) % 1_000_000;
  return String(code).padStart(6, "0");
}

export async function launch() {
  return chromium.launch({
    executablePath: process.env.FISCUS_CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync"],
  });
}

// Signs in by e-mail (no workspace id is ever typed) and returns the page, on the console's dashboard. A
// person who belongs to several workspaces is asked which one: `workspace` is the name to pick, and
// `onPicker(page)`, when given, is awaited on the picker before the pick.
export async function signIn(browser, base, email, password, secretB32, workspace, onPicker) {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${base}/console/login`);
  await page.fill("input[name=email]", email);
  await page.fill("input[name=password]", password);
  await page.fill("input[name=code]", totp(base32Decode(secretB32), 1));
  await page.click("button[type=submit]");
  await page.waitForLoadState();
  if (workspace !== undefined) {
    const heading = await page.textContent("h1");
    if (heading !== "Choose a workspace") throw new Error(`expected the workspace picker, saw ${heading}`);
    if (onPicker) await onPicker(page);
    console.log("picking the workspace by name");
    await page.click(`button:has-text("${workspace}")`);
    await page.waitForLoadState();
  }
  if (new URL(page.url()).pathname !== "/console") {
    throw new Error(`sign-in did not reach the console: ${page.url()}\n${(await page.textContent("body")).slice(0, 400)}`);
  }
  console.log("signed in");
  return page;
}
