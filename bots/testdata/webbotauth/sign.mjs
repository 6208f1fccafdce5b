// Sends one request signed by Cloudflare's web-bot-auth package (the real
// implementation a crawler would use) and prints the response body.
// Usage: node sign.mjs <url> <signature-agent origin> <jwk.json> [mode]
// mode: "ok" (default), "expired" (created and expires in the past),
// "replay" (the same signature sent twice; both bodies printed),
// "tampered" (the signed Host differs from the one sent).
import { readFileSync } from "node:fs";
import { signatureHeaders } from "web-bot-auth";
import { signerFromJWK } from "web-bot-auth/crypto";

const [url, agent, keyFile, mode = "ok"] = process.argv.slice(2);
const jwk = JSON.parse(readFileSync(keyFile, "utf8"));
const signer = await signerFromJWK(jwk);
const now = mode === "expired" ? new Date(Date.now() - 600_000) : new Date();
const agentHeader = JSON.stringify(agent); // an sf-string: "http://…"
const signedURL = mode === "tampered" ? url.replace("127.0.0.1", "localhost") : url;
const signed = new Request(signedURL, { headers: { "Signature-Agent": agentHeader } });
const h = await signatureHeaders(signed, signer, {
  created: now,
  expires: new Date(now.getTime() + 300_000),
});
const headers = {
  "User-Agent": "Mozilla/5.0 (compatible; ExampleAgent/1.0)",
  "Signature-Agent": agentHeader,
  Signature: h["Signature"],
  "Signature-Input": h["Signature-Input"],
};
const times = mode === "replay" ? 2 : 1;
for (let i = 0; i < times; i++) {
  const res = await fetch(url, { headers });
  process.stdout.write((await res.text()) + "\n");
}
