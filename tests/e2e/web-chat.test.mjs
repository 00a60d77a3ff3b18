// The web chat in headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core)
// against a real nurllamad and real GGUF models. The models are "scripted" (scripted-model.cpp):
// real qwen2 files whose weights make them say an exact text, so the assertions can be exact.
//
//   node web-chat.test.mjs NURLLAMAD NURL_SCRIPTED_MODEL BASE_QWEN2_GGUF ARTEFACT_DIR
//
// Two users in two browser contexts chat at once and see only their own conversations; a reload
// keeps the history; Stop cancels a long reply and the server's slot is free within a second
// (/api/ps active_requests); HTML in a reply renders as text; token mode asks once, then works,
// and a wrong or revoked token is asked for again; the phone viewport never scrolls sideways.
// Screenshots (desktop and phone) go to ARTEFACT_DIR.
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';

const [daemonBin, scriptedBin, baseModel, artefacts] = process.argv.slice(2);
if (!artefacts) {
  console.error('usage: web-chat.test.mjs NURLLAMAD NURL_SCRIPTED_MODEL BASE.gguf ARTEFACT_DIR');
  process.exit(2);
}

const HELLO = 'Hello from the scripted model.';
const XSS = '<img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script> and **bold**';
const LOOP = 'The quick brown fox jumps over the lazy dog. ';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nurl-web-e2e-'));
const daemons = [];
const contexts = [];

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

// One request over the daemon's Unix socket (control routes, creating store models).
function unixRequest(sock, method, p, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({ socketPath: sock, method, path: p, headers: data ? { 'Content-Type': 'application/json' } : {} },
      (res) => {
        let text = '';
        res.on('data', (c) => { text += c; });
        res.on('end', () => resolve({ status: res.statusCode, body: text }));
      });
    req.on('error', reject);
    if (data) req.write(data);
    req.end();
  });
}

async function startDaemon(name, env = {}) {
  const home = path.join(tmp, name);
  fs.mkdirSync(home);
  const port = await freePort();
  const sock = path.join(home, 'd.sock');
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(NURLLAMA|OLLAMA)_/.test(k)));
  const log = fs.openSync(path.join(home, 'daemon.log'), 'w');
  const proc = spawn(daemonBin, [], {
    env: { ...clean, HOME: home, XDG_RUNTIME_DIR: path.join(home, 'xdg'), NURLLAMA_HOST: `127.0.0.1:${port}`,
      NURLLAMA_SOCKET: sock, NURLLAMA_NUM_PARALLEL: '4', NURLLAMA_CONTEXT_LENGTH: '2048', ...env },
    stdio: ['ignore', log, log],
  });
  const d = { proc, base: `http://127.0.0.1:${port}`, sock, home };
  daemons.push(d);
  for (let i = 0; i < 300; i++) {
    try {
      const r = await fetch(d.base + '/');
      if (r.status === 200) break;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  const models = { hello: [HELLO], xss: [XSS], loop: [LOOP, '--loop'] };
  for (const [m, args] of Object.entries(models)) {
    const file = path.join(tmp, m + '.gguf');
    if (!fs.existsSync(file)) execFileSync(scriptedBin, [baseModel, file, ...args]);
    const r = await unixRequest(sock, 'POST', '/api/create', { model: m, from: file, stream: false });
    assert.equal(r.status, 200, r.body);
  }
  return d;
}

async function newUser(viewport = { width: 1280, height: 860 }) {
  const dir = fs.mkdtempSync(path.join(tmp, 'profile-'));
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, viewport,
  });
  contexts.push(ctx);
  const page = ctx.pages()[0] || await ctx.newPage();
  page.on('pageerror', (e) => { page.errors = (page.errors || []).concat(String(e)); });
  return page;
}

async function ready(page) {
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 20000 });
}

async function chooseModel(page, name) {
  await page.selectOption('#model', `${name}:latest`);
}

async function sendMessage(page, text) {
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
}

// Waits until the last assistant message has finished streaming; returns its text.
async function lastReply(page, timeout = 30000) {
  await page.waitForFunction(() => {
    const m = [...document.querySelectorAll('.message.assistant')].pop();
    return m && m.getAttribute('aria-busy') === 'false';
  }, null, { timeout });
  return page.evaluate(() => [...document.querySelectorAll('.message.assistant .message-body')].pop().textContent);
}

async function titles(page) {
  return page.$$eval('#conversations button', (bs) => bs.map((b) => b.textContent));
}

let open;
before(async () => {
  open = await startDaemon('open');
});

after(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  for (const d of daemons) {
    d.proc.kill('SIGTERM');
    await new Promise((r) => d.proc.once('exit', r));
  }
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('two users chat at the same time and see only their own conversations; a reload keeps them', async () => {
  const alice = await newUser();
  const bob = await newUser();
  await Promise.all([alice.goto(open.base), bob.goto(open.base)]);
  await Promise.all([ready(alice), ready(bob)]);
  await chooseModel(alice, 'hello');
  await chooseModel(bob, 'hello');
  await Promise.all([sendMessage(alice, 'I am Alice'), sendMessage(bob, 'I am Bob')]);
  const [a, b] = await Promise.all([lastReply(alice), lastReply(bob)]);
  assert.equal(a, HELLO);
  assert.equal(b, HELLO);
  await alice.waitForFunction(() => document.querySelectorAll('#conversations button').length === 1);
  await bob.waitForFunction(() => document.querySelectorAll('#conversations button').length === 1);
  assert.deepEqual(await titles(alice), ['I am Alice']);
  assert.deepEqual(await titles(bob), ['I am Bob']);

  await alice.reload();
  await ready(alice);
  assert.deepEqual(await titles(alice), ['I am Alice']);
  const shown = await alice.$$eval('.message .message-body', (els) => els.map((e) => e.textContent));
  assert.deepEqual(shown, ['I am Alice', HELLO]);
  assert.equal(await alice.textContent('#title'), 'I am Alice');

  // Keyboard: Shift+Enter is a new line, Enter sends.
  await alice.fill('#input', '');
  await alice.locator('#input').pressSequentially('line one');
  await alice.keyboard.press('Shift+Enter');
  await alice.locator('#input').pressSequentially('line two');
  assert.equal(await alice.inputValue('#input'), 'line one\nline two');
  await alice.keyboard.press('Enter');
  assert.equal(await lastReply(alice), HELLO);
  const users = await alice.$$eval('.message.user .message-body', (els) => els.map((e) => e.textContent));
  assert.deepEqual(users, ['I am Alice', 'line one\nline two']);
  await alice.screenshot({ path: path.join(artefacts, 'web-chat-desktop.png'), fullPage: true });
  assert.deepEqual(alice.errors || [], []);
  assert.deepEqual(bob.errors || [], []);
});

test('Stop (Esc) cancels a long reply and frees the server slot within a second', async () => {
  const page = await newUser();
  await page.goto(open.base);
  await ready(page);
  await chooseModel(page, 'loop');
  await sendMessage(page, 'go on forever');
  await page.waitForFunction(() => {
    const m = [...document.querySelectorAll('.message.assistant .message-body')].pop();
    return m && m.textContent.length > 200;
  }, null, { timeout: 30000 });
  const active = async () => {
    const ps = await (await fetch(open.base + '/api/ps')).json();
    return ps.models.filter((m) => m.name.startsWith('loop')).reduce((n, m) => n + m.active_requests, 0);
  };
  assert.equal(await active(), 1);
  await page.keyboard.press('Escape');
  const t0 = Date.now();
  while ((await active()) !== 0) {
    assert.ok(Date.now() - t0 < 1000, 'the slot is still busy a second after Stop');
    await new Promise((r) => setTimeout(r, 25));
  }
  await lastReply(page);
  assert.equal(await page.isHidden('#stop'), true);
  assert.match(await page.textContent('.message.assistant .badge'), /incomplete/);
  const partial = await page.textContent('.message.assistant .message-body');
  assert.ok(LOOP.repeat(200).startsWith(partial.trim().slice(0, 150)));
  // The server kept the partial reply, marked incomplete.
  await page.reload();
  await ready(page);
  assert.match(await page.textContent('.message.assistant .badge'), /incomplete/);
  assert.ok((await page.textContent('.message.assistant .message-body')).length > 100);
});

test('HTML in a reply is shown as text, never run', async () => {
  const page = await newUser();
  await page.goto(open.base);
  await ready(page);
  await chooseModel(page, 'xss');
  await sendMessage(page, 'say something dangerous');
  const text = await lastReply(page);
  assert.ok(text.includes('<img src=x onerror="window.__pwned=1">'), text);
  assert.ok(text.includes('<script>window.__pwned=2</script>'), text);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator('.message-body img, .message-body script').count(), 0);
  assert.equal(await page.textContent('.message.assistant .message-body strong'), 'bold');
  // History is rendered the same way after a reload.
  await page.reload();
  await ready(page);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator('.message-body img, .message-body script').count(), 0);
  assert.ok((await page.textContent('.message.assistant .message-body')).includes('<script>'));
});

test('token mode asks once, then works; wrong and revoked tokens are refused', async () => {
  const d = await startDaemon('tokens', { NURLLAMA_ACCESS: 'tokens' });
  const made = JSON.parse((await unixRequest(d.sock, 'POST', '/control/tokens', { name: 'browser', scope: 'chat' })).body);
  const page = await newUser();
  await page.goto(d.base);
  await page.waitForSelector('#token-dialog[open]');
  await page.fill('#token-input', 'nl_this-is-not-a-valid-token');
  await page.click('#token-save');
  await page.waitForFunction(() => /refused/.test(document.getElementById('token-error').textContent));
  await page.fill('#token-input', made.token);
  await page.click('#token-save');
  await ready(page);
  assert.equal(await page.isVisible('#token-dialog'), false);
  await chooseModel(page, 'hello');
  await sendMessage(page, 'with a token');
  assert.equal(await lastReply(page), HELLO);
  await page.reload();
  await ready(page);  // the token is kept: no second prompt
  assert.equal(await page.isVisible('#token-dialog'), false);
  assert.deepEqual(await titles(page), ['with a token']);

  const r = await unixRequest(d.sock, 'DELETE', '/control/tokens/browser');
  assert.equal(r.status, 200, r.body);
  await page.reload();
  await page.waitForSelector('#token-dialog[open]');
  assert.match(await page.textContent('#token-error'), /refused/);
});

test('the phone-sized page never scrolls sideways', async () => {
  const page = await newUser({ width: 390, height: 844 });
  await page.goto(open.base);
  await ready(page);
  await chooseModel(page, 'xss');
  await sendMessage(page, 'a very long word: ' + 'x'.repeat(300) + '\n```\n' + 'code '.repeat(80) + '\n```');
  await lastReply(page);
  await chooseModel(page, 'loop');
  await sendMessage(page, 'and a long reply');
  await page.waitForFunction(() => [...document.querySelectorAll('.message-body')].pop().textContent.length > 400);
  await page.keyboard.press('Escape');
  await lastReply(page);
  const overflow = () => page.evaluate(() => ({
    doc: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    body: document.body.scrollWidth - document.body.clientWidth,
    widest: Math.max(...[...document.querySelectorAll('body *')].map((e) => e.getBoundingClientRect().right)) -
      window.innerWidth,
  }));
  let o = await overflow();
  assert.ok(o.doc <= 0 && o.body <= 0, JSON.stringify(o));
  assert.equal(await page.isVisible('#open-sidebar'), true);
  await page.click('#open-sidebar');
  await page.waitForFunction(() => getComputedStyle(document.getElementById('sidebar')).visibility === 'visible');
  o = await overflow();
  assert.ok(o.doc <= 0 && o.body <= 0, JSON.stringify(o));
  await page.keyboard.press('Escape');
  await page.screenshot({ path: path.join(artefacts, 'web-chat-phone.png'), fullPage: false });
});
