// Starts a real nurllamad for the npm-client end-to-end tests: a free loopback port, a temporary
// home and control socket, model paths allowed (the test models are files). stop() sends
// SIGTERM and returns the exit code.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, openSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const freePort = () =>
  new Promise((ok) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

export async function startDaemon(daemonPath, extraEnv = {}) {
  const port = await freePort();
  const home = mkdtempSync(join(tmpdir(), 'nurl-js-'));
  const logPath = join(home, 'daemon.log');
  const socket = join(home, 'nurllamad.sock');
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(NURLLAMA|OLLAMA)_/.test(k)));
  Object.assign(env, {
    HOME: home,
    XDG_RUNTIME_DIR: join(home, 'xdg'),
    NURLLAMA_HOST: `127.0.0.1:${port}`,
    NURLLAMA_SOCKET: socket,
    NURLLAMA_ALLOW_MODEL_PATHS: '1',
    NURLLAMA_NUM_PARALLEL: '2',
    ...extraEnv,
  });
  const log = openSync(logPath, 'w');
  const proc = spawn(resolve(daemonPath), [], { env, stdio: ['ignore', log, log] });
  const base = `http://127.0.0.1:${port}`;
  const d = {
    proc,
    home,
    base,
    socket,
    log: () => readFileSync(logPath, 'utf8'),
    async stop() {
      const exited = new Promise((ok) => proc.on('exit', (code) => ok(code)));
      proc.kill('SIGTERM');
      const code = await exited;
      rmSync(home, { recursive: true, force: true });
      return code;
    },
    // A request over the control socket (pulls of local files are accepted there only).
    unix(method, path, body) {
      return new Promise((ok, fail) => {
        const data = body === undefined ? '' : JSON.stringify(body);
        const req = request({ socketPath: socket, method, path, headers: { 'Content-Type': 'application/json' } },
          (res) => {
            let text = '';
            res.on('data', (c) => (text += c));
            res.on('end', () => ok({ status: res.statusCode, text }));
          });
        req.on('error', fail);
        req.end(data);
      });
    },
    // A sample of GET /metrics ("name{labels}"), 0 when absent.
    async metric(series) {
      const text = await (await fetch(base + '/metrics')).text();
      for (const line of text.split('\n')) if (line.startsWith(series + ' ')) return Number(line.slice(series.length + 1));
      return 0;
    },
  };
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(base + '/api/version')).ok) return d;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error('nurllamad did not start:\n' + d.log());
}

// Polls until cond() holds (or ~5 s pass); returns its last value.
export async function eventually(cond) {
  let v;
  for (let i = 0; i < 100; i++) {
    v = await cond();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  return v;
}

// The recorded greedy text of a golden result up to the first near-tie (margin < 0.1), which two
// engines may break differently: what any greedy run must start with.
export function greedyPrefix(result) {
  let out = '';
  for (const step of result.greedy_steps) {
    if (step.eog || step.margin < 0.1) break;
    out += step.piece;
  }
  return out;
}

// The npm client `pkg` (its module), or a clear message and exit 1 when `npm ci` has not run here.
export async function importClient(pkg) {
  try {
    return await import(pkg);
  } catch (e) {
    console.error(`the npm "${pkg}" package is missing: run \`npm ci\` in tests/e2e (scripts/test.sh does)`);
    process.exit(1);
  }
}

// The test's command-line arguments (`names`), or its usage and exit 2 when one is missing.
export function testArgs(script, ...names) {
  const args = process.argv.slice(2, 2 + names.length);
  if (args.length < names.length || args.some((a) => !a)) {
    console.error(`usage: node ${script} ${names.join(' ')}`);
    process.exit(2);
  }
  return args;
}
