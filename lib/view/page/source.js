// Where the page's data comes from: the JSON the file embeds, or the
// server's API with the token of the page's own URL.
import { $ } from "./dom.js";

function fileSource(data) {
  const bodies = data.bodies || {};
  return {
    mode: "file",
    runs: () => Promise.resolve(data.runs),
    detail: (id) => Promise.resolve(data.details[id]),
    request: (id, i) => {
      const run = bodies[id];
      const text = run ? run[String(i)] : undefined;
      return Promise.resolve(
        text === undefined
          ? { error: "This file holds no request bodies" }
          : { request: text },
      );
    },
    reply: () => Promise.resolve({ error: "This file holds no replies" }),
    read: () => Promise.resolve({ error: "This file holds no results" }),
    find: () => Promise.resolve({ error: "This file holds no results" }),
  };
}

function serverSource(token) {
  async function get(path) {
    const response = await fetch(path, {
      headers: { Authorization: "Bearer " + token },
      cache: "no-store",
      credentials: "omit",
      redirect: "error",
    });
    const body = await response.json();
    if (!response.ok && body.error === undefined) {
      return { error: "HTTP " + response.status };
    }
    return body;
  }
  const run = (id) => "/api/runs/" + encodeURIComponent(id);
  const query = (params) => {
    const q = new URLSearchParams();
    for (const key of Object.keys(params)) {
      if (params[key] !== undefined && params[key] !== "") {
        q.set(key, String(params[key]));
      }
    }
    return q.toString();
  };
  return {
    mode: "served",
    runs: () => get("/api/runs"),
    detail: (id) => get(run(id)),
    request: (id, i) => get(run(id) + "/requests/" + i),
    reply: (id, i) => get(run(id) + "/replies/" + i),
    read: (id, rid, params) =>
      get(
        run(id) + "/results/" + encodeURIComponent(rid) + "/read?" +
          query(params),
      ),
    find: (id, rid, params) =>
      get(
        run(id) + "/results/" + encodeURIComponent(rid) + "/find?" +
          query(params),
      ),
  };
}

const embedded = $("loom-data");
export const source = embedded
  ? fileSource(JSON.parse(embedded.textContent))
  : serverSource(new URLSearchParams(location.search).get("token") || "");
