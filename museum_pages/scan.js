"use strict";
const form = document.getElementById("scan");
const field = document.getElementById("code");
const outcome = document.getElementById("outcome");

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = field.value.trim();
  field.value = "";
  if (!text) return;
  const body = text.startsWith("MUSEUM1:") ? { code: text } : { confirmationCode: text };
  const response = await fetch("/v1.1/admissions", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const answer = await response.json();
  outcome.textContent = answer.result || answer.detail;
  field.focus();
});
