// `make worker`: the Worker example in workerd, with a fault server upstream.
//
//   node www/worker/run.mjs     prints "worker: <url>", runs until Ctrl-C
//
//   import { startWorkerExample } from './run.mjs';
//   const w = await startWorkerExample();   // { url, fault, close() }
//
// Starts the fault server on 127.0.0.1, then `workerd serve config.capnp` on a
// free 127.0.0.1 port (workerd binds port 0 and reports the port on fd 3),
// with the fault server's origin as the UPSTREAM environment variable.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMain, startFaultServer } from '../server/fault-server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const WORKERD = path.join(REPO, 'node_modules/.bin/workerd');
const CONFIG = path.join(HERE, 'config.capnp');
const START_MS = 20_000;
const STOP_MS = 3_000;

/** Resolves to workerd's port, read from its control fd; rejects on exit or after START_MS. */
function listeningPort(child, output) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => fail(new Error(`workerd reported no port in ${START_MS} ms`)), START_MS);
    const onExit = (code, sig) => fail(new Error(`workerd exited (${code ?? sig})`));
    function fail(err) {
      clearTimeout(timer);
      child.off('exit', onExit);
      err.message += output.text ? `:\n${output.text}` : '';
      reject(err);
    }
    child.once('exit', onExit);
    child.stdio[3].setEncoding('utf8').on('data', (chunk) => {
      buf += chunk;
      const lines = buf.split('\n');
      buf = lines.pop();
      for (const line of lines) {
        try {
          const msg = JSON.parse(line);
          if (msg.event === 'listen' && msg.socket === 'http') {
            clearTimeout(timer);
            child.off('exit', onExit);
            resolve(msg.port);
          }
        } catch { /* not a JSON line */ }
      }
    });
  });
}

/** Stops workerd's process group: SIGTERM, then SIGKILL after STOP_MS. */
function stopWorkerd(child) {
  if (child.exitCode != null || child.signalCode != null) return Promise.resolve();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const kill = (sig) => { try { process.kill(-child.pid, sig); } catch { /* already gone */ } };
  kill('SIGTERM');
  const timer = setTimeout(() => kill('SIGKILL'), STOP_MS);
  return exited.finally(() => clearTimeout(timer));
}

export async function startWorkerExample({ echo = false } = {}) {
  for (const f of ['js/src/saferetry.js', 'js/src/saferetry_bg.wasm']) {
    if (!fs.existsSync(path.join(REPO, f))) throw new Error(`${f} is missing: run \`make build\` first`);
  }
  if (!fs.existsSync(WORKERD)) throw new Error('node_modules/.bin/workerd is missing: run `npm install` (or `make bootstrap`)');
  const fault = await startFaultServer({ host: '127.0.0.1' });
  const child = spawn(WORKERD, ['serve', CONFIG, '--socket-addr', 'http=127.0.0.1:0', '--control-fd', '3'], {
    cwd: REPO, detached: true, stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    env: { ...process.env, UPSTREAM: fault.url },
  });
  const killOnExit = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } };
  process.once('exit', killOnExit);
  const output = { text: '' }; // workerd's last 4 KB of stdout/stderr, for errors
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8').on('data', (d) => {
      output.text = (output.text + d).slice(-4096);
      if (echo) process.stderr.write(d);
    });
  }
  const close = async () => {
    process.off('exit', killOnExit);
    await stopWorkerd(child);
    await fault.close();
  };
  try {
    const port = await listeningPort(child, output);
    return { url: `http://127.0.0.1:${port}`, fault, close, output };
  } catch (err) {
    await close();
    throw err;
  }
}

if (isMain(import.meta.url)) {
  let w;
  try {
    w = await startWorkerExample({ echo: true });
  } catch (err) {
    console.error(`worker: ${err.message}`);
    process.exit(1);
  }
  console.log(`worker: ${w.url}`);
  console.log(`upstream (fault server): ${w.fault.url}`);
  console.log('try:');
  console.log(`  curl -i '${w.url}/proxy?u=/s/seq/demo1?steps=503,503,200'`);
  console.log(`  curl -i -X POST --data 'order=42' '${w.url}/proxy?u=/s/reset-after-read/demo2'`);
  console.log(`  curl '${w.fault.url}/count/demo1'`);
  console.log('Ctrl-C stops both.');
  const stop = async (sig) => {
    console.log(`\n${sig}: stopping workerd and the fault server`);
    await w.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
