// When does `auto` hand a document over? (BENCHMARKS.md "When auto hands
// over"; src/policy/body.rs AUTO_HANDOVER_MS.) For JSON documents of several
// sizes, sent chunked (no Content-Length, as a gzip'd or streamed JSON is),
// measures the time from the response's headers to its last byte over
// emulated links. The link is a proxy on 127.0.0.1 that delays every byte by
// half the round trip each way and paces it at the link's rate — what
// Chrome DevTools' and Lighthouse's throttling do (no TCP slow start: real
// links add round trips to that). Each request takes a fresh connection.
//   node bench/handover.mjs [runs per cell, default 20]
import http from "node:http";
import net from "node:net";

const LINKS = {
  "loopback": null,
  "LAN (1 ms, 100 Mbit/s)": { rtt: 1, bps: 100e6 },
  "4G (60 ms, 9 Mbit/s)": { rtt: 60, bps: 9e6 },
  "Fast 4G (150 ms, 1.6 Mbit/s)": { rtt: 150, bps: 1.6e6 },
  "Slow 3G (400 ms, 400 kbit/s)": { rtt: 400, bps: 400e3 },
};
const SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20];
const HANDOVER_MS = 250;
const runs = Number(process.argv[2] ?? 20);

const server = http.createServer((req, res) => {
  const size = Number(new URL(req.url, "http://x").searchParams.get("size"));
  res.writeHead(200, { "content-type": "application/json", connection: "close" });
  // A serializer's output: 16 KiB pieces, as fast as the socket takes them.
  const piece = Buffer.alloc(16 << 10, 0x20);
  let left = size;
  const write = () => {
    while (left > 0) {
      const n = Math.min(left, piece.length);
      left -= n;
      if (!res.write(piece.subarray(0, n))) return res.once("drain", write);
    }
    res.end();
  };
  write();
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));

const MSS = 1460;

/** One direction of the link, segment by segment: each leaves when the
 * link's rate lets it and arrives rtt/2 later, in order. */
function pipe(from, to, link) {
  let free = 0; // when the link finishes sending what it has
  const queue = []; // [arrival, segment | null (the end)]
  let timer = null;
  const pump = () => {
    timer = null;
    const now = performance.now();
    while (queue.length && queue[0][0] <= now) {
      const [, segment] = queue.shift();
      if (segment) to.write(segment);
      else to.end();
    }
    if (queue.length) timer = setTimeout(pump, queue[0][0] - now);
  };
  const push = (segment) => {
    const now = performance.now();
    if (segment) free = Math.max(free, now) + (segment.length * 8 * 1000) / link.bps;
    queue.push([Math.max(free, now) + link.rtt / 2, segment]);
    if (!timer) timer = setTimeout(pump, queue[0][0] - now);
  };
  from.on("data", (data) => {
    for (let at = 0; at < data.length; at += MSS) push(data.subarray(at, at + MSS));
  });
  from.on("end", () => push(null));
  from.on("error", () => to.destroy());
}

async function through(link) {
  if (!link) return { port: server.address().port, close() {} };
  const proxy = net.createServer((client) => {
    const upstream = net.connect(server.address().port, "127.0.0.1");
    pipe(client, upstream, link);
    pipe(upstream, client, link);
  });
  await new Promise((r) => proxy.listen(0, "127.0.0.1", r));
  return { port: proxy.address().port, close: () => proxy.close() };
}

const rows = [];
for (const [name, link] of Object.entries(LINKS)) {
  const { port, close } = await through(link);
  const row = {};
  for (const size of SIZES) {
    const times = [];
    for (let i = 0; i < runs; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/?size=${size}`);
      const headers = performance.now();
      await res.arrayBuffer();
      times.push(performance.now() - headers);
    }
    times.sort((a, b) => a - b);
    row[size] = { p50: times[Math.floor(runs / 2)], p99: times[Math.min(runs - 1, Math.ceil(runs * 0.99) - 1)] };
  }
  close();
  rows.push([name, row]);
}
server.close();
const kib = (n) => (n >= 1 << 20 ? `${n >> 20} MiB` : `${n >> 10} KiB`);
const cell = ({ p50, p99 }) => `${Math.round(p50)} / ${Math.round(p99)}${p99 < HANDOVER_MS ? "" : " ▸"}`;
console.log(`headers → last byte of a chunked JSON, ms, p50 / p99 of ${runs} requests (▸: p99 ≥ ${HANDOVER_MS} ms: \`auto\` hands it over and it streams)\n`);
console.log(`| link | ${SIZES.map(kib).join(" | ")} |`);
console.log(`|---|${SIZES.map(() => "---:").join("|")}|`);
for (const [name, r] of rows) console.log(`| ${name} | ${SIZES.map((s) => cell(r[s])).join(" | ")} |`);
