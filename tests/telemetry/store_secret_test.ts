// A gateway whose session lives in a PostgreSQL store, with telemetry on in
// reference mode: the references name the store with its password masked,
// and the password appears nowhere in what the receiver got.
import assert from "node:assert/strict";
import { tempDir } from "../_kit.ts";
import { connectGateway, denoEntry, FAULT, serversFile } from "../_kit/mcp.ts";
import {
  PASSWORD,
  postgresCluster,
  postgresTest,
} from "../storage/_postgres.ts";
import { named, otlpReceiver } from "./_otlp.ts";

postgresTest(
  "a PostgreSQL store's password reaches no span, metric or log of the gateway's telemetry",
  async () => {
    const { url } = await postgresCluster();
    assert.ok(url.includes(PASSWORD));
    await using receiver = otlpReceiver();
    await using dir = await tempDir();
    const servers = await serversFile(dir.path, {
      fault: { ...denoEntry(FAULT), persist: true },
    });
    {
      await using gateway = await connectGateway(
        servers,
        ["--store", url, "--session", "traced", "--offload-bytes", "4096"],
        {
          env: { ...receiver.env(), LOOM_OTEL_CONTENT: "reference" },
          denoFlags: ["--allow-net=127.0.0.1"],
        },
      );
      const answer = await gateway.call("fault__meta", { pad: 20_000 });
      assert.match(
        String(JSON.parse(answer.content[0].text).result),
        /^result-/,
      );
    }
    await receiver.until((spans) =>
      named(spans, "tools/call fault__meta").length === 1
    );
    const [span] = named(receiver.spans(), "tools/call fault__meta");
    const [reference] = JSON.parse(
      String(span?.attributes["gen_ai.tool.call.result"]),
    )["loom.references"];
    assert.match(reference.location, /^postgres:\/\/loom:\*\*\*@127\.0\.0\.1:/);
    const everything = receiver.bodies.join("\n");
    assert.ok(everything.length > 0);
    assert.ok(
      !everything.includes(PASSWORD),
      "the store's password was exported",
    );
  },
);
