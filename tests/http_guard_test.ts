// The checks every Loom HTTP listener shares (lib/http_guard.ts).
import assert from "node:assert/strict";
import {
  bearerToken,
  hostOf,
  isLoopback,
  TokenCheck,
} from "../lib/http_guard.ts";

Deno.test("isLoopback() knows the loopback names and addresses and nothing else", () => {
  for (
    const host of [
      "localhost",
      "LOCALHOST",
      "127.0.0.1",
      "127.255.0.9",
      "::1",
      "[::1]",
      "::ffff:127.0.0.1",
    ]
  ) assert.equal(isLoopback(host), true, host);
  for (
    const host of [
      "0.0.0.0",
      "::",
      "10.0.0.1",
      "128.0.0.1",
      "127.0.0.1.evil.example",
      "127.0.0.256",
      "localhost.evil.example",
      "",
    ]
  ) assert.equal(isLoopback(host), false, host);
});

Deno.test("hostOf() takes the host of a Host header, bracketed IPv6 included", () => {
  assert.equal(hostOf("127.0.0.1:8080"), "127.0.0.1");
  assert.equal(hostOf("[::1]:8080"), "::1");
  assert.equal(hostOf("[::1]"), "::1");
  assert.equal(hostOf("evil.example"), "evil.example");
});

Deno.test("TokenCheck matches the token only, never a prefix, an empty or a missing one", () => {
  const check = new TokenCheck("0123456789abcdef0123456789abcdef");
  assert.equal(check.matches("0123456789abcdef0123456789abcdef"), true);
  for (
    const wrong of [
      null,
      "",
      "0123456789abcdef",
      "0123456789abcdef0123456789abcdef0",
      "0123456789ABCDEF0123456789ABCDEF",
    ]
  ) assert.equal(check.matches(wrong), false, String(wrong));
  assert.equal(bearerToken("bearer  tok "), "tok");
  assert.equal(bearerToken("Bearer"), null);
});
