// nurllama web chat: talks only to this server (/web/* for conversations and replies, /api/tags
// for the model list). The nl_client cookie (HttpOnly, set by the server) says whose history
// this is; with access "tokens" the page asks for a token once and keeps it in localStorage.
// Everything the model or the history says is shown through text nodes or NurlMarkdown (DOM
// built from text), never as HTML.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const md = window.NurlMarkdown;
  const TOKEN_KEY = 'nurllama.token';
  const CURRENT_KEY = 'nurllama.conversation';

  const state = {
    token: localStorage.getItem(TOKEN_KEY) || '',
    session: null,
    models: [],
    conversations: [],
    current: null,    // the conversation shown; null for a new chat not saved yet
    messages: [],
    streaming: null,  // {controller, conversation, view}
  };

  class HttpError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function button(text, label, onClick) {
    const b = el('button', null, text);
    b.type = 'button';
    if (label) b.setAttribute('aria-label', label);
    b.addEventListener('click', onClick);
    return b;
  }

  function notice(text) {
    $('notice').textContent = text || '';
  }

  function humanSize(n) {
    if (!n) return '';
    const units = ['B', 'KB', 'MB', 'GB', 'TB'];
    let i = 0;
    let v = n;
    while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
    return (v >= 100 || i === 0 ? Math.round(v) : v.toFixed(1)) + ' ' + units[i];
  }

  // ---- the token ----

  let tokenPrompt = null;
  function askToken(message) {
    if (tokenPrompt) return tokenPrompt;
    const dialog = $('token-dialog');
    $('token-error').textContent = message || '';
    $('token-input').value = '';
    tokenPrompt = new Promise((resolve) => {
      const form = $('token-form');
      const onSubmit = (e) => {
        e.preventDefault();
        const v = $('token-input').value.trim();
        if (!v) return;
        form.removeEventListener('submit', onSubmit);
        state.token = v;
        localStorage.setItem(TOKEN_KEY, v);
        dialog.close();
        tokenPrompt = null;
        resolve();
      };
      form.addEventListener('submit', onSubmit);
    });
    if (!dialog.open) dialog.showModal();
    $('token-input').focus();
    return tokenPrompt;
  }

  async function request(method, path, body, opts = {}) {
    const headers = { Accept: 'application/json' };
    // The server's CSRF rule: changes are JSON, from this page.
    if (method !== 'GET' && method !== 'HEAD') headers['Content-Type'] = 'application/json';
    if (state.token) headers.Authorization = 'Bearer ' + state.token;
    const res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
      signal: opts.signal,
    });
    if (res.status === 401) {
      const data = await res.json().catch(() => ({}));
      await askToken(state.token ? 'That token was refused (' + (data.error || 'unauthorized') + ').' : '');
      return request(method, path, body, opts);
    }
    if (opts.raw) return res;
    if (!res.ok) {
      const data = await res.json().catch(() => ({}));
      throw new HttpError(res.status, data.error || 'HTTP ' + res.status);
    }
    const type = res.headers.get('content-type') || '';
    return type.includes('json') ? res.json() : res.text();
  }

  // ---- models ----

  function modelLabel(name) {
    const m = state.models.find((x) => x.name === name);
    if (!m) return name.includes('/') ? name.slice(name.lastIndexOf('/') + 1) : name;
    const d = m.details || {};
    return name + ' — ' + [d.family, d.parameter_size, humanSize(m.size)].filter(Boolean).join(', ');
  }

  async function loadModels() {
    try {
      const data = await request('GET', '/api/tags');
      state.models = data.models || [];
    } catch (e) {
      state.models = [];
      notice('Could not list the models: ' + e.message);
    }
    fillModelPicker(state.current ? state.current.model : '');
  }

  function fillModelPicker(want) {
    const sel = $('model');
    sel.replaceChildren();
    const names = state.models.map((m) => m.name);
    const dflt = state.session && state.session.default_model;
    if (dflt && !names.includes(dflt)) names.unshift(dflt);
    if (want && !names.includes(want)) names.unshift(want);
    for (const n of names) {
      const o = el('option', null, modelLabel(n));
      o.value = n;
      sel.append(o);
    }
    if (!names.length) {
      const o = el('option', null, 'No models yet (nurllama pull NAME)');
      o.value = '';
      o.disabled = true;
      sel.append(o);
    }
    sel.value = want || dflt || names[0] || '';
    showModelInfo();
  }

  function showModelInfo() {
    const m = state.models.find((x) => x.name === $('model').value);
    const d = (m && m.details) || {};
    $('model-info').textContent = m ? [d.family, d.quantization_level, humanSize(m.size)].filter(Boolean).join(' · ') : '';
  }

  // ---- conversations ----

  async function loadConversations() {
    const q = $('search').value.trim();
    try {
      const data = await request('GET', '/web/conversations' + (q ? '?q=' + encodeURIComponent(q) : ''));
      state.conversations = data.conversations || [];
    } catch (e) {
      notice('Could not load the conversations: ' + e.message);
      return;
    }
    renderConversations();
  }

  function renderConversations() {
    const ul = $('conversations');
    ul.replaceChildren();
    if (!state.conversations.length) {
      ul.append(el('li', 'empty', $('search').value.trim() ? 'No titles match.' : 'No conversations yet.'));
      return;
    }
    for (const c of state.conversations) {
      const li = el('li');
      const b = button(c.title || 'Untitled', null, () => {
        openConversation(c.id);
        closeSidebar();
      });
      b.dataset.id = c.id;
      if (state.current && state.current.id === c.id) b.setAttribute('aria-current', 'true');
      li.append(b);
      ul.append(li);
    }
  }

  function showHeader() {
    const c = state.current;
    $('title').textContent = c ? c.title || 'Untitled' : 'New chat';
    document.title = (c && c.title ? c.title + ' — ' : '') + 'nurllama';
    for (const id of ['rename', 'export-md', 'export-json', 'delete']) $(id).disabled = !c;
    $('system').value = c ? c.system : $('system').value;
  }

  async function openConversation(id) {
    try {
      const data = await request('GET', '/web/conversations/' + encodeURIComponent(id) + '/messages');
      state.current = data.conversation;
      state.messages = data.messages;
      localStorage.setItem(CURRENT_KEY, id);
    } catch (e) {
      if (e.status === 404) {
        localStorage.removeItem(CURRENT_KEY);
        newChat();
        await loadConversations();
        return;
      }
      notice('Could not open the conversation: ' + e.message);
      return;
    }
    showHeader();
    fillModelPicker(state.current.model);
    renderMessages();
    renderConversations();
  }

  function newChat() {
    state.current = null;
    state.messages = [];
    localStorage.removeItem(CURRENT_KEY);
    $('system').value = '';
    showHeader();
    fillModelPicker('');
    renderMessages();
    renderConversations();
    $('input').focus();
  }

  // ---- messages ----

  function messageView(m) {
    const art = el('article', 'message ' + m.role);
    art.setAttribute('aria-label', m.role === 'user' ? 'You' : 'Assistant');
    const head = el('div', 'message-head');
    head.append(el('span', 'role', m.role === 'user' ? 'You' : 'Assistant'));
    if (m.role === 'assistant' && m.model) head.append(el('span', 'model', modelLabel(m.model).split(' — ')[0]));
    const badge = el('span', 'badge');
    badge.hidden = true;
    head.append(badge);
    art.append(head);
    const trim = el('div', 'trim-note');
    trim.hidden = true;
    const thinking = el('details', 'thinking');
    thinking.hidden = true;
    thinking.append(el('summary', null, 'Thinking'), el('div', 'thinking-body'));
    const body = el('div', 'message-body');
    const error = el('div', 'error-box');
    error.setAttribute('role', 'alert');
    error.hidden = true;
    const foot = el('div', 'message-foot');
    art.append(trim, thinking, body, error, foot);
    const view = { art, badge, trim, thinking, body, error, foot, message: Object.assign({}, m) };
    foot.append(button('Copy', m.role === 'user' ? 'Copy your message' : 'Copy the reply', (e) =>
      md.copyText(view.message.content, e.currentTarget)));
    updateView(view);
    return view;
  }

  function updateView(view) {
    const m = view.message;
    if (m.role === 'user') view.body.textContent = m.content;
    else view.body.replaceChildren(md.render(m.content));
    view.thinking.hidden = !m.thinking;
    view.thinking.lastChild.textContent = m.thinking || '';
    const cut = (m.timings && m.timings.truncated_prompt_tokens) || 0;
    if (m.trimmed > 0 || cut > 0) {
      view.trim.hidden = false;
      view.trim.textContent = (m.trimmed > 0 ? m.trimmed + (m.trimmed === 1 ? ' earlier message was' : ' earlier messages were') +
        ' left out so the conversation fits the model\'s context.' : '') +
        (cut > 0 ? ' The prompt was still too long: its first ' + cut + ' tokens were cut.' : '');
    }
    const states = { incomplete: 'incomplete', error: 'error' };
    view.badge.hidden = !states[m.state] || view.streaming;
    view.badge.textContent = states[m.state] || '';
    view.error.hidden = !m.error;
    view.error.textContent = m.error ? 'Error: ' + m.error : '';
    view.body.classList.toggle('typing', !!view.streaming);
  }

  function renderMessages() {
    const box = $('messages');
    box.replaceChildren();
    if (!state.messages.length) {
      box.append(el('p', 'empty', state.current ? 'No messages yet.' : 'Start a conversation below.'));
      return;
    }
    let lastAssistant = null;
    for (const m of state.messages) {
      const v = messageView(m);
      box.append(v.art);
      if (m.role === 'assistant') lastAssistant = v;
    }
    const last = state.messages[state.messages.length - 1];
    if (lastAssistant && last.role === 'assistant') addRegenerate(lastAssistant);
    else if (last.role === 'user') addAnswerButton();
    box.scrollTop = box.scrollHeight;
  }

  function addRegenerate(view) {
    view.foot.append(button('Regenerate', 'Regenerate the last reply', () => {
      if (state.streaming) return;
      view.art.remove();
      state.messages.pop();
      streamReply({ regenerate: true });
    }));
  }

  // The last message is the user's without a reply (a failed request): offer to answer it.
  function addAnswerButton() {
    const box = $('messages');
    const b = button('Answer the last message', null, () => {
      if (state.streaming) return;
      b.remove();
      streamReply({ regenerate: true });
    });
    b.className = 'answer';
    box.append(b);
  }

  function scrollDown() {
    const box = $('messages');
    if (box.scrollHeight - box.scrollTop - box.clientHeight < 200) box.scrollTop = box.scrollHeight;
  }

  // ---- sending and streaming ----

  function setStreaming(on) {
    $('send').hidden = on;
    $('stop').hidden = !on;
    $('send').disabled = on;
  }

  async function send() {
    const input = $('input');
    const text = input.value;
    if (!text.trim() || state.streaming) return;
    const model = $('model').value;
    if (!model) {
      notice('Choose a model first (none is installed: nurllama pull NAME).');
      return;
    }
    notice('');
    if (!state.current) {
      try {
        state.current = await request('POST', '/web/conversations', { model, system: $('system').value });
        localStorage.setItem(CURRENT_KEY, state.current.id);
        showHeader();
      } catch (e) {
        notice('Could not start a conversation: ' + e.message);
        return;
      }
    }
    input.value = '';
    autoGrow();
    const box = $('messages');
    if (!state.messages.length) box.replaceChildren();
    for (const b of box.querySelectorAll('.message-foot button:last-child, .answer'))
      if (b.textContent === 'Regenerate' || b.classList.contains('answer')) b.remove();
    const user = { role: 'user', content: text, state: 'complete' };
    state.messages.push(user);
    box.append(messageView(user).art);
    box.scrollTop = box.scrollHeight;
    await streamReply({ content: text });
  }

  async function streamReply(extra) {
    const conv = state.current;
    if (!conv || state.streaming) return;
    const model = $('model').value || conv.model;
    const message = { role: 'assistant', content: '', thinking: '', model, state: 'incomplete', trimmed: 0 };
    const view = messageView(message);
    view.streaming = true;
    view.art.setAttribute('aria-busy', 'true');
    updateView(view);
    $('messages').append(view.art);
    scrollDown();
    const controller = new AbortController();
    state.streaming = { controller, conversation: conv.id, view };
    setStreaming(true);
    let pending = false;
    const redraw = () => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        updateView(view);
        scrollDown();
      });
    };
    let stopped = false;
    let finished = null;
    try {
      const res = await request('POST', '/web/chat', Object.assign({ conversation: conv.id, model }, extra),
        { raw: true, signal: controller.signal });
      if (!res.ok) {
        const data = await res.json().catch(() => ({}));
        const retry = res.headers.get('retry-after');
        throw new HttpError(res.status, (data.error || 'HTTP ' + res.status) + (retry ? ' (retry in ' + retry + ' s)' : ''));
      }
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          const ev = JSON.parse(line);
          if (ev.type === 'text') view.message.content += ev.text;
          else if (ev.type === 'thinking') view.message.thinking += ev.text;
          else if (ev.type === 'done') finished = ev.message;
          else if (ev.type === 'error') throw new Error(ev.error);
          if (ev.trimmed) view.message.trimmed = ev.trimmed;
          redraw();
        }
      }
      if (finished) view.message = finished;
      else throw new Error('the reply ended early (the connection was closed)');
    } catch (e) {
      if (e.name === 'AbortError') {
        stopped = true;
        view.message.state = 'incomplete';
      } else {
        view.message.state = 'error';
        view.message.error = e.message;
      }
    } finally {
      view.streaming = false;
      view.art.setAttribute('aria-busy', 'false');
      updateView(view);
      state.streaming = null;
      setStreaming(false);
    }
    if (state.current && state.current.id === conv.id) {
      state.messages.push(view.message);
      if (view.message.role === 'assistant') addRegenerate(view);
    }
    if (stopped) notice('Stopped. The reply so far is kept, marked incomplete.');
    await loadConversations();
    if (state.current && state.current.id === conv.id) {
      const fresh = state.conversations.find((c) => c.id === conv.id);
      if (fresh) {
        state.current = fresh;
        showHeader();
      }
    }
    if (document.activeElement === document.body) $('input').focus();
  }

  function stop() {
    if (state.streaming) state.streaming.controller.abort();
  }

  // ---- conversation actions ----

  function openDialog(id) {
    const d = $(id);
    d.showModal();
    return d;
  }

  function rename() {
    if (!state.current) return;
    $('rename-input').value = state.current.title;
    openDialog('rename-dialog');
    $('rename-input').select();
  }

  async function saveRename(e) {
    e.preventDefault();
    const title = $('rename-input').value.trim();
    $('rename-dialog').close();
    if (!title || !state.current) return;
    try {
      state.current = await request('PATCH', '/web/conversations/' + encodeURIComponent(state.current.id), { title });
      showHeader();
      await loadConversations();
    } catch (err) {
      notice('Could not rename: ' + err.message);
    }
  }

  async function confirmDelete(e) {
    e.preventDefault();
    $('delete-dialog').close();
    if (!state.current) return;
    try {
      await request('DELETE', '/web/conversations/' + encodeURIComponent(state.current.id));
    } catch (err) {
      notice('Could not delete: ' + err.message);
      return;
    }
    newChat();
    await loadConversations();
  }

  async function exportAs(format) {
    if (!state.current) return;
    try {
      const res = await request('GET', '/web/conversations/' + encodeURIComponent(state.current.id) +
        '/export?format=' + format, undefined, { raw: true });
      if (!res.ok) throw new HttpError(res.status, 'HTTP ' + res.status);
      const blob = await res.blob();
      const a = el('a');
      a.href = URL.createObjectURL(blob);
      a.download = (state.current.title || 'conversation').replace(/[^\w -]+/g, '').trim().replace(/\s+/g, '-') +
        (format === 'markdown' ? '.md' : '.json');
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    } catch (err) {
      notice('Could not export: ' + err.message);
    }
  }

  async function saveSystem() {
    if (!state.current) {
      notice('The system prompt applies to the conversation you start next.');
      return;
    }
    try {
      state.current = await request('PATCH', '/web/conversations/' + encodeURIComponent(state.current.id),
        { system: $('system').value });
      notice('System prompt saved.');
    } catch (err) {
      notice('Could not save the system prompt: ' + err.message);
    }
  }

  async function changeModel() {
    showModelInfo();
    if (!state.current || !$('model').value) return;
    try {
      state.current = await request('PATCH', '/web/conversations/' + encodeURIComponent(state.current.id),
        { model: $('model').value });
    } catch (err) {
      notice('Could not change the model: ' + err.message);
    }
  }

  // ---- layout and keys ----

  function openSidebar() {
    $('app').classList.add('sidebar-open');
    $('open-sidebar').setAttribute('aria-expanded', 'true');
    $('search').focus();
  }

  function closeSidebar() {
    if (!$('app').classList.contains('sidebar-open')) return;
    $('app').classList.remove('sidebar-open');
    $('open-sidebar').setAttribute('aria-expanded', 'false');
  }

  function autoGrow() {
    const t = $('input');
    t.style.height = 'auto';
    t.style.height = Math.min(t.scrollHeight + 2, window.innerHeight * 0.4) + 'px';
  }

  let searchTimer = 0;

  function bind() {
    $('composer').addEventListener('submit', (e) => {
      e.preventDefault();
      send();
    });
    $('input').addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        send();
      }
    });
    $('input').addEventListener('input', autoGrow);
    $('stop').addEventListener('click', stop);
    document.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape') return;
      if (state.streaming) {
        e.preventDefault();
        stop();
      } else {
        closeSidebar();
      }
    });
    $('new-chat').addEventListener('click', () => {
      newChat();
      closeSidebar();
    });
    $('search').addEventListener('input', () => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(loadConversations, 200);
    });
    $('rename').addEventListener('click', rename);
    $('rename-form').addEventListener('submit', saveRename);
    $('rename-cancel').addEventListener('click', () => $('rename-dialog').close());
    $('delete').addEventListener('click', () => openDialog('delete-dialog'));
    $('delete-form').addEventListener('submit', confirmDelete);
    $('delete-cancel').addEventListener('click', () => $('delete-dialog').close());
    $('export-md').addEventListener('click', () => exportAs('markdown'));
    $('export-json').addEventListener('click', () => exportAs('json'));
    $('save-system').addEventListener('click', saveSystem);
    $('model').addEventListener('change', changeModel);
    $('open-sidebar').addEventListener('click', openSidebar);
    $('close-sidebar').addEventListener('click', closeSidebar);
    $('token-dialog').addEventListener('cancel', (e) => e.preventDefault());  // a token is needed
  }

  async function start() {
    bind();
    try {
      state.session = await request('GET', '/web/session');
    } catch (e) {
      notice('The server did not answer: ' + e.message);
      return;
    }
    await Promise.all([loadModels(), loadConversations()]);
    const remembered = localStorage.getItem(CURRENT_KEY);
    const pick = state.conversations.find((c) => c.id === remembered) || state.conversations[0];
    if (pick) await openConversation(pick.id);
    else newChat();
    document.body.dataset.ready = 'true';
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
