// Removes what the container suite left behind: containers labelled dev.steward.harness=<pid> whose jest
// process is gone, and testcontainers networks that are empty and more than five minutes old. Talks to the
// Docker-compatible API (DOCKER_HOST=unix://...) directly, so `npm test` can run it once jest has ended.
const http = require("node:http");

const LABEL = "dev.steward.harness";

function socketPath() {
  const host = process.env.DOCKER_HOST || "unix:///var/run/docker.sock";
  return host.startsWith("unix://") ? host.slice("unix://".length) : null;
}

function api(method, path) {
  const socket = socketPath();
  if (!socket) return Promise.reject(new Error(`DOCKER_HOST ${process.env.DOCKER_HOST} is not a unix socket`));
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath: socket, method, path, timeout: 10_000 }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => {
        if (res.statusCode >= 400) return reject(new Error(`${method} ${path}: ${res.statusCode} ${body.slice(0, 200)}`));
        try {
          resolve(/json/.test(res.headers["content-type"] ?? "") ? JSON.parse(body) : body);
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer`)));
    req.on("error", reject);
    req.end();
  });
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

/** True when the engine's API answers at DOCKER_HOST. */
async function engineAnswers() {
  return api("GET", "/_ping").then(
    () => true,
    () => false,
  );
}

/** Removes the leftovers; resolves with how many containers and networks went. */
async function sweep() {
  const filter = encodeURIComponent(JSON.stringify({ label: [LABEL] }));
  let removed = 0;
  for (const c of await api("GET", `/containers/json?all=1&filters=${filter}`)) {
    const pid = Number(c.Labels?.[LABEL]);
    if (!Number.isInteger(pid) || pid <= 0 || alive(pid)) continue;
    await api("DELETE", `/containers/${c.Id}?force=1&v=1`).catch(() => undefined);
    removed++;
  }
  // testcontainers cannot label a network; a topology attaches its first container seconds after making one.
  const tc = encodeURIComponent(JSON.stringify({ label: ["org.testcontainers=true"] }));
  for (const n of await api("GET", `/networks?filters=${tc}`)) {
    const info = await api("GET", `/networks/${n.Id}`).catch(() => null);
    if (!info || Object.keys(info.Containers ?? {}).length > 0) continue;
    if (Date.now() - Date.parse(info.Created) < 5 * 60_000) continue;
    await api("DELETE", `/networks/${n.Id}`).catch(() => undefined);
    removed++;
  }
  return removed;
}

module.exports = { LABEL, engineAnswers, sweep };
