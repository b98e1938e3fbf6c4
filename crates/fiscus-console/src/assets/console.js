// Fiscus console: the only script. It adds a copy button beside each hash; every decision works without it
// (the full value is always in the hash's disclosure, to select and copy by hand).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  if (!navigator.clipboard) return;
  for (const hash of document.querySelectorAll("details.hash[data-copy]")) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy the full hash");
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(hash.dataset.copy);
        button.textContent = "Copied";
      } catch {
        button.textContent = "Copy failed";
      }
      setTimeout(() => { button.textContent = "Copy"; }, 2000);
    });
    hash.insertAdjacentElement("afterend", button);
  }
});
