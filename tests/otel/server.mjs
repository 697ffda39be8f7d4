// The otel tier's server, on 127.0.0.1: the cases' paths, each request's
// `traceparent` kept per path, and (for the Chromium page) static files.
//   /ok            200 "ok"
//   /busy-once/ID  503 + Retry-After: 1 the first time for ID, then 200
//   /drop          reads the request, then destroys the socket (maybe-delivered)
//   /hang          answers only when the server closes (the cancel case)
//   /later         503 + Retry-After: 3600 (try-later: the wait exceeds the budget)
import http from "node:http";
import { readFile } from "node:fs/promises";
import path from "node:path";

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm" };

export async function startServer({ files = {} } = {}) {
  const seen = new Map(); // path -> [{ method, traceparent, authorization }]
  const busy = new Set();
  const hanging = new Set();
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const list = seen.get(url.pathname) ?? [];
    list.push({ method: req.method, traceparent: req.headers.traceparent });
    seen.set(url.pathname, list);
    const file = files[url.pathname];
    if (file) {
      const body = await readFile(file);
      res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" });
      return res.end(body);
    }
    if (url.pathname === "/ok") return res.end("ok");
    if (url.pathname.startsWith("/busy-once/")) {
      if (busy.has(url.pathname)) return res.end("ok");
      busy.add(url.pathname);
      res.writeHead(503, { "retry-after": "1" });
      return res.end("busy");
    }
    if (url.pathname === "/drop") {
      req.resume();
      req.on("end", () => req.socket.destroy());
      return;
    }
    if (url.pathname === "/hang") {
      hanging.add(res);
      return;
    }
    if (url.pathname === "/later") {
      res.writeHead(503, { "retry-after": "3600" });
      return res.end("later");
    }
    res.writeHead(404);
    res.end();
  });
  server.keepAliveTimeout = 1;
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    seen,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections?.();
      await new Promise((r) => server.close(r));
    },
  };
}
